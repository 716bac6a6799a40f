// Package docs holds Harvest's documentation (the Markdown files beside this
// one) and the tests that keep it true to the code: configuration.md must
// list exactly the options the components read, with their types and
// declared defaults (config_test.go), and metrics.md exactly the metrics
// they serve (metrics_test.go).
package docs
