package contract

import (
	"net/url"
	"strings"
	"time"
)

// DefaultKVPrefix is where Harvest keeps its state in Consul KV unless a
// component's consul block (prefix) or harvestctl's -prefix says otherwise.
const DefaultKVPrefix = "harvest/"

// KVPrefix is the prefix every key of Harvest's state starts with: prefix
// ("" for DefaultKVPrefix) ending in a slash, so that "harvest" and
// "harvest/" name the same place and every key, the blob maintainer's lock
// included, lands under it.
func KVPrefix(prefix string) string {
	if prefix == "" {
		return DefaultKVPrefix
	}
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	return prefix
}

// ClassesDocument is the name of the placer's class table (api.ClassTable)
// in the platform's Consul KV prefix.
const ClassesDocument = "classes"

// BusyDir is the folder, under the platform's Consul KV prefix, where every
// harvest driver publishes its node's BusyFlag, one document per node.
const BusyDir = "busy/"

// BusyFlagMaxAge is how old a busy flag may be and still count: four
// missed 30-second writes. An older flag is stale: not busy, and its
// primary's figures are not used.
const BusyFlagMaxAge = 2 * time.Minute

// BusyDocument is the document name of a node's busy flag.
func BusyDocument(node string) string { return BusyDir + node }

// BusyFlag is what the harvest driver publishes at <prefix>busy/<node>
// every 30 s and on every change: the node is busy when its primary tenant
// uses Threshold percent of capacity or more, and the blob tier then reads
// from another replica; the placer sizes each class's room from the
// primary's CPU and memory, and harvestctl status shows them. They are
// published here rather than as fingerprint attributes, which must stay
// coarse (a changing attribute is a node update for Nomad's scheduler). A
// flag is stale, and counts as not busy, when Updated is old.
type BusyFlag struct {
	Busy          bool      `json:"busy"`
	PrimaryCPU    float64   `json:"primary_cpu_percent"`
	PrimaryMemory float64   `json:"primary_memory_mib"`
	Threshold     float64   `json:"threshold_percent"`
	Updated       time.Time `json:"updated"`
}

// DecisionsDir is the document folder (under the KV prefix) where the
// placer keeps the last admission decision (placer/proxy.Decision) of every
// harvested job it registered: decisions/<namespace>/<job>, both path-escaped.
const DecisionsDir = "decisions/"

// DecisionDocument is the document name of a job's decision.
func DecisionDocument(namespace, job string) string {
	return DecisionsDir + url.PathEscape(namespace) + "/" + url.PathEscape(job)
}
