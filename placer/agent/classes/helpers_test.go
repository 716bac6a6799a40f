package classes

import (
	"time"

	"github.com/harvest-platform/harvest/placer/labels/labelstest"
)

// now is the tests' clock.
var now = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

// fakeNodes is an in-memory Nomad for the refresher.
type fakeNodes = labelstest.Nodes
