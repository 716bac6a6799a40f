package historyimporter

import (
	"context"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/harvest-platform/harvest/plugins/base"
	pb "github.com/harvest-platform/harvest/plugins/historyimporter/proto"
)

// Plugin is the go-plugin GRPCPlugin of a history importer: on the plugin
// side it serves Impl, on the host side it dispenses a *Client.
type Plugin struct {
	plugin.NetRPCUnsupportedPlugin
	// Impl is served by the plugin binary (unused on the host side).
	Impl Importer
	// CallTimeout bounds SetConfig and PluginInfo, and the wait for each
	// record of an Import stream (0: base.DefaultCallTimeout).
	CallTimeout time.Duration
}

var _ plugin.GRPCPlugin = (*Plugin)(nil)

// GRPCServer registers the HistoryImporter service for Impl.
func (p *Plugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterHistoryImporterServer(s, &server{Server: base.Server{Impl: p.Impl}, impl: p.Impl})
	return nil
}

// GRPCClient returns the host's *Client over the plugin's connection.
func (p *Plugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	rpc := pb.NewHistoryImporterClient(c)
	return &Client{
		Client: base.Client{RPC: rpc, Timeout: p.CallTimeout},
		rpc:    rpc,
		idle:   p.CallTimeout,
	}, nil
}
