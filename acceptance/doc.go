// Package acceptance holds the end-to-end tests of Harvest. They run against
// a local cluster of real Consul, Nomad and MinIO processes (see
// internal/localcluster) and live behind the `acceptance` build tag:
//
//	go test -tags acceptance -v ./acceptance/...   (or: make acceptance)
package acceptance
