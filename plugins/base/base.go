// Package base owns what every Harvest plugin shares: the go-plugin
// handshake, the plugin type names, PluginInfo, the Base interface (SetConfig
// and PluginInfo) with its gRPC client and server, and the call-deadline
// helpers. It is part of the SDK a third party builds a plugin against, so
// it imports no other Harvest package (make check-plugins checks it).
package base

import (
	"context"
	"time"

	"github.com/hashicorp/go-plugin"
)

// Plugin types: the key a plugin binary serves its implementation under in
// plugin.ServeConfig.Plugins, and the Type its PluginInfo reports.
const (
	PluginTypeUsageSource     = "usage_source"
	PluginTypeHistoryImporter = "history_importer"
)

// Handshake is the go-plugin handshake every Harvest plugin binary and host
// use. A binary started without the cookie (say, by hand) says it is a
// plugin and exits; bump ProtocolVersion on an incompatible wire change.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  1,
	MagicCookieKey:   "HARVEST_PLUGIN_MAGIC_COOKIE",
	MagicCookieValue: "4f1c7b0e9d2a4e6b8c35a1f0d7e92b64harvest",
}

// PluginInfo is what a plugin says it is.
type PluginInfo struct {
	Name    string // the driver name operators use, e.g. "prometheus"
	Type    string // PluginTypeUsageSource or PluginTypeHistoryImporter
	Version string // the plugin's own version, free form
}

// Base is what every plugin implements, whatever its type.
type Base interface {
	// SetConfig hands the plugin its config block's `config` map. It is
	// called after every (re)start, before any other call; a plugin that
	// cannot work with the config returns an error and is not used.
	SetConfig(config map[string]string) error
	// PluginInfo says who the plugin is.
	PluginInfo() (*PluginInfo, error)
}

// DefaultCallTimeout bounds a call to a plugin whose context has no earlier
// deadline: a hung plugin then fails with context.DeadlineExceeded instead of
// blocking its caller.
const DefaultCallTimeout = 10 * time.Second

// WithCallTimeout returns ctx with a deadline at most timeout from now (ctx's
// own deadline if that is earlier). A timeout of 0 means DefaultCallTimeout.
func WithCallTimeout(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		timeout = DefaultCallTimeout
	}
	if d, ok := ctx.Deadline(); ok && time.Until(d) <= timeout {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, timeout)
}
