//go:build tools

// Package tools pins the Nomad agent so `go mod tidy` records its whole module graph.
package tools

import _ "github.com/hashicorp/nomad"
