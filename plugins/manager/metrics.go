package manager

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Failure kinds, the kind label of harvest_plugin_failures_total.
const (
	KindCrash = "crash" // the plugin process exited, or its connection broke
	KindHang  = "hang"  // a call ran past its deadline
	KindStart = "start" // a (re)start failed: launch, handshake, PluginInfo or SetConfig
	KindError = "error" // the plugin answered with an error of its own (not restarted)
)

// metrics are the manager's Prometheus series, labelled by block name.
type metrics struct {
	restarts *prometheus.CounterVec
	up       *prometheus.GaugeVec
	failures *prometheus.CounterVec
	fallback *prometheus.GaugeVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		restarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "harvest_plugin_restarts_total",
			Help: "Times an external plugin was restarted after a crash or a hang.",
		}, []string{"plugin"}),
		up: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "harvest_plugin_up",
			Help: "1 while the plugin is running and answering, 0 while it is down.",
		}, []string{"plugin"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "harvest_plugin_failures_total",
			Help: "Plugin failures by kind: crash, hang, start (a failed (re)start) or error (the plugin's own).",
		}, []string{"plugin", "kind"}),
		fallback: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "harvest_plugin_fallback_active",
			Help: "1 while a usage source's samples come from its built-in fallback instead of the plugin.",
		}, []string{"plugin"}),
	}
	if reg != nil {
		m.restarts = register(reg, m.restarts)
		m.up = register(reg, m.up)
		m.failures = register(reg, m.failures)
		m.fallback = register(reg, m.fallback)
	}
	return m
}

// RegisterMetrics registers in reg the collectors of the harvest_plugin_*
// series, as a Manager does in its Options.Registerer (a Manager given reg
// afterwards shares them). The driver and the placer name the series they
// serve from it (observability's test checks the dashboard and the alerts
// against those names).
func RegisterMetrics(reg prometheus.Registerer) {
	newMetrics(reg)
}

// register registers c, or returns the collector already registered under
// its name (two managers in one process share the series).
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
		panic(err) // a different collector under our name: a programming error
	}
	return c
}
