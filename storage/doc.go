// Package storage is the harvested blob tier: an S3 front over MinIO servers
// on harvested nodes, replica placement on the reimage x peak-CPU diversity
// grid, busy denial and repair. Its placement algorithm lives in an I/O-free
// subpackage that the simulator runs too.
package storage
