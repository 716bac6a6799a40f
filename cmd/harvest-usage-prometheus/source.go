package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/harvest-platform/harvest/plugins/base"
	"github.com/harvest-platform/harvest/plugins/usagesource"
)

type config struct {
	url, primaryURL        string
	primaryCPU, primaryMem string
	primaryLabels          map[string]string
	capacityCPU            float64
	capacityMem            uint64
	timeout, firstInterval time.Duration
}

// source is the plugin's usagesource.Source.
type source struct {
	log    hclog.Logger
	client *http.Client

	mu   sync.Mutex
	cfg  *config
	prev *reading           // the previous Sample's, for the CPU rates
	last *usagesource.Usage // the last rated Sample, while the exporter's stamps stand still
}

var _ usagesource.Source = (*source)(nil)

func newSource(log hclog.Logger) *source { return &source{log: log, client: &http.Client{}} }

func (s *source) PluginInfo() (*base.PluginInfo, error) {
	return &base.PluginInfo{Name: "harvest-usage-prometheus", Type: base.PluginTypeUsageSource, Version: "0.1.0"}, nil
}

func (s *source) SetConfig(c map[string]string) error {
	cfg := &config{url: c["url"], primaryURL: c["primary_url"], primaryCPU: c["primary_cpu_metric"],
		primaryMem: c["primary_memory_metric"], primaryLabels: map[string]string{}, timeout: 5 * time.Second, firstInterval: 250 * time.Millisecond}
	if cfg.url == "" {
		return errors.New("url: the node_exporter endpoint is required")
	}
	if cfg.primaryURL == "" {
		cfg.primaryURL = cfg.url
	}
	if (cfg.primaryCPU == "") != (cfg.primaryMem == "") {
		return errors.New("primary_cpu_metric and primary_memory_metric go together")
	}
	if v := c["primary_labels"]; v != "" {
		for _, kv := range strings.Split(v, ",") {
			k, val, ok := strings.Cut(strings.TrimSpace(kv), "=")
			if !ok || k == "" {
				return fmt.Errorf("primary_labels %q: want k=v[,k=v...]", v)
			}
			cfg.primaryLabels[k] = val
		}
	}
	var err error
	parse := func(key string, f func(string) error) {
		if v := c[key]; v != "" && err == nil {
			if e := f(v); e != nil {
				err = fmt.Errorf("%s %q: %w", key, v, e)
			}
		}
	}
	parse("capacity_cpu_cores", func(v string) (e error) { cfg.capacityCPU, e = strconv.ParseFloat(v, 64); return })
	parse("capacity_memory_bytes", func(v string) (e error) { cfg.capacityMem, e = strconv.ParseUint(v, 10, 64); return })
	parse("timeout", func(v string) (e error) { cfg.timeout, e = time.ParseDuration(v); return })
	parse("first_interval", func(v string) (e error) { cfg.firstInterval, e = time.ParseDuration(v); return })
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.cfg, s.prev, s.last = cfg, nil, nil
	s.mu.Unlock()
	return nil
}

// Sample scrapes now and rates the CPU counters against the previous scrape
// (the first Sample scrapes twice, first_interval apart).
func (s *source) Sample(ctx context.Context) (usagesource.Usage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cfg == nil {
		return usagesource.Usage{}, errors.New("not configured")
	}
	if s.prev == nil {
		first, err := s.read(ctx)
		if err != nil {
			return usagesource.Usage{}, err
		}
		select {
		case <-time.After(s.cfg.firstInterval):
		case <-ctx.Done():
			return usagesource.Usage{}, ctx.Err()
		}
		s.prev = first
	}
	cur, err := s.read(ctx)
	if err != nil {
		return usagesource.Usage{}, err
	}
	if notNewer(s.prev, cur, s.cfg.primaryCPU != "") {
		// The exporter stamps its samples and has none newer than the last
		// scrape's (cAdvisor refreshes about once a second, and two scrapes
		// can fall in one millisecond): nothing to rate over. The last
		// rate stands, with its own time, so the caller's staleness check
		// still sees an exporter that stopped.
		if s.last != nil {
			return *s.last, nil
		}
		return usagesource.Usage{}, errors.New("the exporter's sample timestamps have not moved since the last scrape")
	}
	if uncertain(s.prev, cur, s.cfg.primaryCPU != "") {
		// A scrape slow enough to blur the window (no stamps from the
		// exporter): the window is merged into the next one (prev kept),
		// and the last rate stands meanwhile, as above.
		s.log.Debug("scrape too slow to time the window; merged into the next", "at", cur.at, "uncertain_by", cur.atWidth)
		if s.last != nil {
			return *s.last, nil
		}
		return usagesource.Usage{}, errors.New("the scrape was too slow to time its window")
	}
	u := usage(s.cfg, s.prev, cur)
	s.prev, s.last = cur, &u
	return u, nil
}

// notNewer says cur has a counter stamped no later than prev's. A counter
// that reads NaN is news all the same: it rates as NaN, a failed sample.
func notNewer(prev, cur *reading, primary bool) bool {
	if math.IsNaN(cur.hostBusySeconds) || (primary && math.IsNaN(cur.primaryCPUSeconds)) {
		return false
	}
	return !cur.at.After(prev.at) || (primary && !cur.primaryAt.After(prev.primaryAt))
}

// fetch reads one endpoint's metric families, and says when its body had
// arrived.
func (s *source) fetch(ctx context.Context, url string) (map[string]*dto.MetricFamily, time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, time.Time{}, err
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4;q=1,*/*;q=0.1")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, time.Time{}, fmt.Errorf("%s: %s", url, resp.Status)
	}
	dec := expfmt.NewDecoder(resp.Body, expfmt.ResponseFormat(resp.Header))
	fams := map[string]*dto.MetricFamily{}
	for {
		f := &dto.MetricFamily{}
		if err := dec.Decode(f); errors.Is(err, io.EOF) {
			return fams, time.Now(), nil
		} else if err != nil {
			return nil, time.Time{}, fmt.Errorf("%s: %w", url, err)
		}
		fams[f.GetName()] = f
	}
}
