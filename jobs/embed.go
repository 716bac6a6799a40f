// Package jobs holds the Nomad jobs that run Harvest itself (the *.nomad.hcl
// files beside it) and embeds them, so the Terraform provider registers
// exactly the jobs this folder ships.
package jobs

import "embed"

// Platform holds harvest-storage, harvest-blob and harvest-placer.
//
//go:embed harvest-*.nomad.hcl
var Platform embed.FS

// Platform job names, in the order they are brought up: storage nodes first
// (the front lists them when it starts), then the front, then the placer.
var PlatformOrder = []string{"harvest-storage", "harvest-blob", "harvest-placer"}

// File is the file name of a platform job.
func File(name string) string { return name + ".nomad.hcl" }
