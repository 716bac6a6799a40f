package admissions

import (
	"context"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/kv"
)

// A run the proxy admitted began when it was admitted; an escalation's
// version of it continues it and keeps that time; a new run begins anew;
// a run not the recorded one has no beginning the placer knows.
func TestAContinuedRunKeepsWhenItBegan(t *testing.T) {
	ctx := context.Background()
	clock := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	a := New(history.NewStore(kv.NewMem(), "harvest/"))
	a.now = func() time.Time { return clock }
	if err := a.As("proxy").Admit(ctx, "default", "etl", 7); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(time.Minute)
	if err := a.As("escalator").Continue(ctx, "default", "etl", 9); err != nil {
		t.Fatal(err)
	}
	if ok, _ := a.Admitted(ctx, "default", "etl", 9); !ok {
		t.Fatal("the escalation's version is not the admitted run")
	}
	if began, ok, err := a.Began(ctx, "default", "etl", 9); err != nil || !ok || !began.Equal(clock.Add(-time.Minute)) {
		t.Fatalf("began %v (%v, %v), want the proxy's admission a minute before", began, ok, err)
	}
	if _, ok, _ := a.Began(ctx, "default", "etl", 7); ok {
		t.Fatal("the replaced version still has a beginning")
	}
	clock = clock.Add(time.Minute)
	if err := a.As("proxy").Admit(ctx, "default", "etl", 12); err != nil {
		t.Fatal(err)
	}
	if began, _, _ := a.Began(ctx, "default", "etl", 12); !began.Equal(clock) {
		t.Fatalf("a new run began %v, want %v", began, clock)
	}
	if err := a.As("escalator").Continue(ctx, "default", "fresh", 3); err != nil {
		t.Fatal(err)
	}
	if began, ok, _ := a.Began(ctx, "default", "fresh", 3); !ok || !began.Equal(clock) {
		t.Fatalf("a continuation of no recorded run: began %v (%v), want now", began, ok)
	}
}
