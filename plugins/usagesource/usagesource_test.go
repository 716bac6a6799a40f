package usagesource

import (
	"testing"
	"time"
)

func TestWireFormRoundTrip(t *testing.T) {
	u := Usage{Time: time.Date(2026, 11, 1, 12, 0, 0, 123456789, time.UTC), CapacityCPUCores: 16, CapacityMemoryBytes: 64 << 30,
		HostMeasured: true, HostCPUCores: 7.25, HostMemoryBytes: 20 << 30, PrimaryCPUCores: 3.5, PrimaryMemoryBytes: 12 << 30}
	if got := FromProto(ToProto(u)); got != u {
		t.Fatalf("round trip: %+v, want %+v", got, u)
	}
	if got := FromProto(ToProto(Usage{})); !got.Time.IsZero() || got != (Usage{}) {
		t.Fatalf("zero usage: %+v", got)
	}
}
