package base

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	basepb "github.com/harvest-platform/harvest/plugins/base/proto"
)

// Server answers PluginInfo and SetConfig from an implementation; each
// plugin type's gRPC server forwards those two calls to it.
type Server struct {
	Impl Base
}

// SetConfig passes the config to the implementation; its error reaches the
// host as InvalidArgument.
func (s *Server) SetConfig(_ context.Context, r *basepb.SetConfigRequest) (*basepb.SetConfigResponse, error) {
	if err := s.Impl.SetConfig(r.GetConfig()); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	return &basepb.SetConfigResponse{}, nil
}

// PluginInfo returns the implementation's info.
func (s *Server) PluginInfo(context.Context, *basepb.PluginInfoRequest) (*basepb.PluginInfoResponse, error) {
	info, err := s.Impl.PluginInfo()
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &basepb.PluginInfoResponse{Name: info.Name, Type: info.Type, Version: info.Version}, nil
}

// ToStatus turns an implementation's error into what goes over the wire:
// context errors keep their meaning, anything else is Unknown with the
// message.
func ToStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	return status.FromContextError(err).Err()
}
