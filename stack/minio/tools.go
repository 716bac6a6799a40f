//go:build tools

// Package tools pins the MinIO server so `go mod tidy` records its whole module graph.
package tools

import _ "github.com/minio/minio"
