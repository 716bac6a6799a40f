package usagesource

import (
	"context"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/harvest-platform/harvest/plugins/base"
	pb "github.com/harvest-platform/harvest/plugins/usagesource/proto"
)

// Plugin is the go-plugin GRPCPlugin of a usage source: on the plugin side
// it serves Impl, on the host side it dispenses a *Client.
type Plugin struct {
	plugin.NetRPCUnsupportedPlugin
	// Impl is served by the plugin binary (unused on the host side).
	Impl Source
	// CallTimeout bounds each host-side call whose context has no earlier
	// deadline (0: base.DefaultCallTimeout).
	CallTimeout time.Duration
}

var _ plugin.GRPCPlugin = (*Plugin)(nil)

// GRPCServer registers the UsageSource service for Impl.
func (p *Plugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterUsageSourceServer(s, &server{Server: base.Server{Impl: p.Impl}, impl: p.Impl})
	return nil
}

// GRPCClient returns the host's *Client over the plugin's connection.
func (p *Plugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	rpc := pb.NewUsageSourceClient(c)
	return &Client{
		Client:  base.Client{RPC: rpc, Timeout: p.CallTimeout},
		rpc:     rpc,
		timeout: p.CallTimeout,
	}, nil
}
