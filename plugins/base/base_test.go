package base

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestWithCallTimeout(t *testing.T) {
	ctx, cancel := WithCallTimeout(context.Background(), 0)
	defer cancel()
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > DefaultCallTimeout || time.Until(d) < DefaultCallTimeout-time.Second {
		t.Fatalf("no deadline: want DefaultCallTimeout, got %v %v", d, ok)
	}
	short, c1 := context.WithTimeout(context.Background(), time.Second)
	defer c1()
	ctx, c2 := WithCallTimeout(short, time.Minute)
	defer c2()
	if d, _ := ctx.Deadline(); time.Until(d) > time.Second {
		t.Fatalf("the caller's earlier deadline was not kept: %v", time.Until(d))
	}
}

func TestFromStatusKeepsCodeAndContextMeaning(t *testing.T) {
	err := FromStatus(status.Error(codes.DeadlineExceeded, "slow"))
	if !errors.Is(err, context.DeadlineExceeded) || status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("%v: Is DeadlineExceeded %v, code %s", err, errors.Is(err, context.DeadlineExceeded), status.Code(err))
	}
	if err := FromStatus(status.Error(codes.Unavailable, "gone")); status.Code(err) != codes.Unavailable || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%v", err)
	}
	if ToStatus(context.DeadlineExceeded) == nil || status.Code(ToStatus(context.DeadlineExceeded)) != codes.DeadlineExceeded {
		t.Fatal("ToStatus lost the deadline")
	}
	if status.Code(ToStatus(errors.New("scrape failed"))) != codes.Unknown {
		t.Fatal("ToStatus of a plain error is not Unknown")
	}
}
