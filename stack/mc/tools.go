//go:build tools

// Package tools pins the MinIO client so `go mod tidy` records its whole module graph.
package tools

import _ "github.com/minio/mc"
