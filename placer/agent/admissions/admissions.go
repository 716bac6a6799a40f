// Package admissions owns which run of each harvested job the placer
// vouches for. The placer acts with its own Nomad token on a harvested job
// after its registration (the sequencer registers its stage jobs and
// records its duration; the escalator re-registers it; the sequencer stops
// the stage jobs of a stopped parent). Anybody allowed to submit jobs could send
// Nomad a job carrying Harvest's meta (harvest_job_type, harvest_stages)
// straight, not through the proxy; the placer must not act on such a job
// as if it had admitted it. So the proxy records each run it registered
// (namespace, job, the JobModifyIndex Nomad answered) under admitted/ in
// Consul KV, the sequencer and the escalator record the runs they register
// themselves, and both act only on a job whose current JobModifyIndex is
// the recorded one. A direct registration (a new JobModifyIndex) therefore
// loses the placer's help, even for a job the proxy admitted before.
//
// Nomad namespaces cannot hold '/', so admitted/<namespace>/<job> names one
// job unambiguously.
package admissions

import (
	"context"
	"time"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/placer/proxy"
)

// admittedDir holds one document per admitted job.
const admittedDir = "admitted/"

// admittedRun is the document: the run the placer vouches for.
type admittedRun struct {
	JobModifyIndex uint64    `json:"job_modify_index"`
	By             string    `json:"by"` // proxy, sequencer, escalator
	At             time.Time `json:"at"`
	// Began is when the run began, where a version the placer registered
	// continues an earlier one (Continue: an escalation); else At.
	Began time.Time `json:"began,omitzero"`
}

// Store reads and writes the documents.
type Store struct {
	store *history.Store
	by    string
	now   func() time.Time
}

var _ proxy.Admissions = Store{}

// New reads and writes the documents in store; Admit records no one
// until As names who admits.
func New(store *history.Store) Store { return Store{store: store} }

func admittedDoc(namespace, job string) string { return admittedDir + namespace + "/" + job }

// Admit records run jobModifyIndex of namespace/job as the placer's.
func (a Store) Admit(ctx context.Context, namespace, job string, jobModifyIndex uint64) error {
	now := time.Now
	if a.now != nil {
		now = a.now
	}
	return a.store.PutDocument(ctx, admittedDoc(namespace, job),
		admittedRun{JobModifyIndex: jobModifyIndex, By: a.by, At: now().UTC()})
}

// Continue records run jobModifyIndex of namespace/job as the placer's, a
// new version of the run recorded before (an escalation's re-registration),
// which keeps the time that run began.
func (a Store) Continue(ctx context.Context, namespace, job string, jobModifyIndex uint64) error {
	var before admittedRun
	ok, err := a.store.GetDocument(ctx, admittedDoc(namespace, job), &before)
	if err != nil || !ok {
		if err == nil {
			err = a.Admit(ctx, namespace, job, jobModifyIndex)
		}
		return err
	}
	began := before.Began
	if began.IsZero() {
		began = before.At
	}
	now := time.Now
	if a.now != nil {
		now = a.now
	}
	return a.store.PutDocument(ctx, admittedDoc(namespace, job),
		admittedRun{JobModifyIndex: jobModifyIndex, By: a.by, At: now().UTC(), Began: began})
}

// Began is when run jobModifyIndex of namespace/job began, as the placer
// recorded it (ok false for a run it did not admit).
func (a Store) Began(ctx context.Context, namespace, job string, jobModifyIndex uint64) (time.Time, bool, error) {
	if a.store == nil {
		return time.Time{}, false, nil
	}
	var run admittedRun
	ok, err := a.store.GetDocument(ctx, admittedDoc(namespace, job), &run)
	if err != nil || !ok || run.JobModifyIndex != jobModifyIndex {
		return time.Time{}, false, err
	}
	if run.Began.IsZero() {
		return run.At, true, nil
	}
	return run.Began, true, nil
}

// Admitted reports whether run jobModifyIndex of namespace/job is the one
// the placer recorded.
func (a Store) Admitted(ctx context.Context, namespace, job string, jobModifyIndex uint64) (bool, error) {
	var run admittedRun
	ok, err := a.store.GetDocument(ctx, admittedDoc(namespace, job), &run)
	return ok && run.JobModifyIndex == jobModifyIndex, err
}

// As is the same store, recording who admits.
func (a Store) As(by string) Store { a.by = by; return a }
