package history

import (
	"context"
	"net/url"
	"time"
)

// JobRun is the last finished run of a harvested job, for typing its next
// run short, medium or long. Key: jobs/<namespace>/<job ID, path-escaped>.
type JobRun struct {
	Namespace string        `json:"namespace"`
	Job       string        `json:"job"`
	Duration  time.Duration `json:"duration_ns"`
	Finished  time.Time     `json:"finished"`
	Status    string        `json:"status"` // "complete" or "failed"
}

func jobDocument(namespace, job string) string {
	return "jobs/" + url.PathEscape(namespace) + "/" + url.PathEscape(job)
}

// RecordJobRun stores a job's latest run, replacing the previous one.
func (s *Store) RecordJobRun(ctx context.Context, r JobRun) error {
	return s.PutDocument(ctx, jobDocument(r.Namespace, r.Job), r)
}

// LastJobRun returns a job's latest recorded run, if any.
func (s *Store) LastJobRun(ctx context.Context, namespace, job string) (JobRun, bool, error) {
	var r JobRun
	ok, err := s.GetDocument(ctx, jobDocument(namespace, job), &r)
	return r, ok, err
}
