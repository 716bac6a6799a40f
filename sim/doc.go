// Package sim is the datacenter simulator: it replays primary tenants, batch
// jobs and reimages at datacenter scale against the very placement packages
// the placer, driver and blob tier run.
package sim
