package localcluster

import (
	"errors"
	"math"
	"strconv"

	"github.com/hashicorp/nomad/client/lib/numalib"
)

// nodeCores is how many cores each client is to the driver and the usage
// plugin.
func (o *Options) nodeCores() int {
	if o.NodeCores > 0 {
		return o.NodeCores
	}
	return nodeCapacityCPU
}

// reserveCores is each driver's reserve_cpu in cores.
func (o *Options) reserveCores() float64 {
	if o.ReserveCores > 0 {
		return o.ReserveCores
	}
	return defaultReserveCPU
}

// reserveCPU is reserve_cpu as the driver's config writes it ("0.5").
func (o *Options) reserveCPU() string { return strconv.FormatFloat(o.reserveCores(), 'g', -1, 64) }

// totalCompute is the clients' cpu_total_compute: NodeCores of the host's
// cores, at the MHz per core Nomad fingerprints; 0 (Nomad's own
// fingerprint) without NodeCores.
func (o *Options) totalCompute() (int, error) {
	if o.NodeCores == 0 {
		return 0, nil
	}
	mhz, err := hostCoreMHz()
	if err != nil {
		return 0, err
	}
	return int(math.Round(float64(o.NodeCores) * mhz)), nil
}

// hostCoreMHz is the host's MHz per core as a Nomad client fingerprints it
// (cpu.totalcompute / cpu.numcores): Nomad's own topology scan.
func hostCoreMHz() (float64, error) {
	top := numalib.Scan(numalib.PlatformScanners(false))
	if top.NumCores() == 0 || top.TotalCompute() == 0 {
		return 0, errors.New("localcluster: cannot tell the host's MHz per core (Nomad's CPU scan found none)")
	}
	return float64(top.TotalCompute()) / float64(top.NumCores()), nil
}
