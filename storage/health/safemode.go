package health

// Safe mode, as HDFS has it: a node that answers without its identity
// marker looks reimaged, and one that stays unreachable for lost_after
// looks lost; either way its replicas are forgotten and re-created
// elsewhere. When more than a share of the nodes look that way within a
// window, it is more likely the front's view that is wrong (a changed data
// path, wrong endpoints, a network split) than that many disks were wiped
// at once: the front holds back forgetting replicas, repairs and garbage
// collection until an operator confirms (POST /v1/safe-mode/confirm,
// harvestctl blob safe-mode confirm) or the nodes come back.

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// SafeModeOptions tune safe mode.
type SafeModeOptions struct {
	Share  float64       // of the nodes looking reimaged or lost within Window that turns safe mode on (default 0.3; >= 1 never)
	Window time.Duration // default 1h
}

type safeMode struct {
	opts      SafeModeOptions
	mu        sync.Mutex
	gone      map[string]time.Time // node -> when it first looked reimaged or lost
	on        bool
	why       string
	confirmed bool
}

func newSafeMode(o SafeModeOptions) *safeMode {
	if o.Share <= 0 {
		o.Share = 0.3
	}
	if o.Window <= 0 {
		o.Window = time.Hour
	}
	return &safeMode{opts: o, gone: map[string]time.Time{}}
}

// reason is why safe mode is on ("" when off).
func (s *safeMode) reason() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.on {
		return ""
	}
	return s.why
}

// judge takes one health round's verdicts: the nodes that look reimaged or
// lost now, and those that answer with their marker. It answers whether
// the nodes that look gone may be forgotten.
func (s *safeMode) judge(gone, back []string, total int, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range back {
		delete(s.gone, id)
	}
	for id, at := range s.gone {
		if now.Sub(at) > s.opts.Window {
			delete(s.gone, id)
		}
	}
	for _, id := range gone {
		if _, ok := s.gone[id]; !ok {
			s.gone[id] = now
		}
	}
	if s.confirmed {
		if len(gone) == 0 {
			s.confirmed = false
		}
		s.on = false
		return true
	}
	if total > 0 && float64(len(s.gone)) > s.opts.Share*float64(total) {
		ids := make([]string, 0, len(s.gone))
		for id := range s.gone {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		s.on = true
		s.why = fmt.Sprintf("%d of %d storage nodes look reimaged or lost within %s (%s); confirm to re-create their replicas",
			len(ids), total, s.opts.Window, strings.Join(ids, ", "))
		return false
	}
	s.on = false
	return true
}

// confirm is the operator's word that the nodes that look gone are gone.
func (s *safeMode) confirm() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	was := s.on
	s.confirmed, s.on = true, false
	return was
}

// SafeMode is why safe mode holds back forgetting replicas, repairs and
// garbage collection ("" when it is off).
func (h *Checker) SafeMode() string { return h.safe.reason() }

// ConfirmSafeMode lets the front forget the nodes that put it in safe mode.
func (h *Checker) ConfirmSafeMode() bool {
	was := h.safe.confirm()
	if was {
		h.log.Warn("safe mode confirmed by an operator: forgetting the nodes that look gone")
	}
	return was
}
