//go:build tools

// Package tools pins the Consul agent so `go mod tidy` records its whole module graph.
package tools

import _ "github.com/hashicorp/consul"
