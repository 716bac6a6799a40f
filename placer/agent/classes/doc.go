// Package classes owns the placer's class table: the Refresher classifies
// every tenant with history (placer/classify), labels Nomad's nodes with
// their class (placer/labels), replays each class's history for its
// survival figures (survival.go, placer/survival) and stores the table in
// Consul KV in api's types (api.ClassTable). The placer's runtime
// (placer/agent) runs it on a schedule and on demand, serves the table and
// reports its metrics through Observer.
package classes
