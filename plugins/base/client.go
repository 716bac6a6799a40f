package base

import (
	"context"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	basepb "github.com/harvest-platform/harvest/plugins/base/proto"
)

// RPC is the PluginInfo and SetConfig half of every plugin type's generated
// gRPC client.
type RPC interface {
	PluginInfo(ctx context.Context, in *basepb.PluginInfoRequest, opts ...grpc.CallOption) (*basepb.PluginInfoResponse, error)
	SetConfig(ctx context.Context, in *basepb.SetConfigRequest, opts ...grpc.CallOption) (*basepb.SetConfigResponse, error)
}

// Client is the host side of Base over a plugin type's gRPC client. Each
// plugin type's client embeds it.
type Client struct {
	RPC RPC
	// Timeout bounds each call (0: DefaultCallTimeout).
	Timeout time.Duration
}

var _ Base = (*Client)(nil)

// SetConfig sends the config map to the plugin.
func (c *Client) SetConfig(config map[string]string) error {
	ctx, cancel := WithCallTimeout(context.Background(), c.Timeout)
	defer cancel()
	_, err := c.RPC.SetConfig(ctx, &basepb.SetConfigRequest{Config: config})
	return FromStatus(err)
}

// PluginInfo asks the plugin who it is.
func (c *Client) PluginInfo() (*PluginInfo, error) {
	ctx, cancel := WithCallTimeout(context.Background(), c.Timeout)
	defer cancel()
	r, err := c.RPC.PluginInfo(ctx, &basepb.PluginInfoRequest{})
	if err != nil {
		return nil, FromStatus(err)
	}
	return &PluginInfo{Name: r.GetName(), Type: r.GetType(), Version: r.GetVersion()}, nil
}

// FromStatus keeps a gRPC error as it is (so status.Code still reads its
// code) but makes a deadline or a cancellation also match
// context.DeadlineExceeded or context.Canceled with errors.Is.
func FromStatus(err error) error {
	if err == nil {
		return nil
	}
	switch status.Code(err) {
	case codes.DeadlineExceeded:
		return &statusError{err, context.DeadlineExceeded}
	case codes.Canceled:
		return &statusError{err, context.Canceled}
	}
	return err
}

type statusError struct {
	err  error // the gRPC status error
	ctxE error // the context error it stands for
}

func (e *statusError) Error() string              { return e.err.Error() }
func (e *statusError) Unwrap() []error            { return []error{e.err, e.ctxE} }
func (e *statusError) GRPCStatus() *status.Status { return status.Convert(e.err) }
