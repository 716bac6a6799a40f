package historyimporter

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/harvest-platform/harvest/plugins/historyimporter/proto"
)

// rawServer misbehaves at the wire level, as a plugin built against another
// SDK or a broken one might; the process-level crashes and hangs are
// exercised with real plugin processes in plugins/manager.
type rawServer struct {
	pb.UnimplementedHistoryImporterServer
	send  int  // series records to send
	end   int  // the count End claims (-1: no End)
	stall bool // then wait for the client to give up
}

func (s *rawServer) Import(_ *pb.ImportRequest, stream grpc.ServerStreamingServer[pb.ImportRecord]) error {
	for i := range s.send {
		if err := stream.Send(&pb.ImportRecord{Record: &pb.ImportRecord_Series{Series: &pb.SeriesChunk{
			Tenant: "a/b", Node: "n", Start: timestamppb.New(time.Unix(1800000000, 0)), StepSeconds: 120, ValuesPercent: []float64{float64(i)}}}}); err != nil {
			return err
		}
	}
	if s.stall {
		<-stream.Context().Done()
		return stream.Context().Err()
	}
	if s.end >= 0 {
		return stream.Send(&pb.ImportRecord{Record: &pb.ImportRecord_End{End: &pb.End{Records: uint64(s.end)}}})
	}
	return nil
}

func dial(t *testing.T, srv *rawServer, idle time.Duration) *Client {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	s := grpc.NewServer()
	pb.RegisterHistoryImporterServer(s, srv)
	go s.Serve(lis)
	t.Cleanup(s.Stop)
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &Client{rpc: pb.NewHistoryImporterClient(conn), idle: idle}
}

func run(c *Client) (int, error) {
	n := 0
	err := c.Import(context.Background(), Range{Start: time.Unix(1800000000, 0), End: time.Unix(1800003600, 0)}, nil,
		func(Record) error { n++; return nil })
	return n, err
}

func TestImportClientChecksTheEnd(t *testing.T) {
	if n, err := run(dial(t, &rawServer{send: 3, end: 3}, time.Second)); err != nil || n != 3 {
		t.Fatalf("whole stream: %d records, %v", n, err)
	}
	if n, err := run(dial(t, &rawServer{send: 3, end: -1}, time.Second)); !errors.Is(err, ErrTruncated) || n != 3 {
		t.Fatalf("stream without End: %d records, %v; want 3 and ErrTruncated", n, err)
	}
	if n, err := run(dial(t, &rawServer{send: 3, end: 5}, time.Second)); err == nil || n != 3 {
		t.Fatalf("End claiming 5 of 3: %d records, %v; want an error", n, err)
	}
}

func TestImportClientIdleDeadline(t *testing.T) {
	start := time.Now()
	n, err := run(dial(t, &rawServer{send: 2, stall: true}, 300*time.Millisecond))
	if !errors.Is(err, context.DeadlineExceeded) || n != 2 || time.Since(start) > 2*time.Second {
		t.Fatalf("stalled stream: %d records, %v after %s; want 2 and DeadlineExceeded after ~300ms", n, err, time.Since(start))
	}
}

func TestEmitErrorStopsTheImport(t *testing.T) {
	stop := errors.New("enough")
	c := dial(t, &rawServer{send: 5, end: 5}, time.Second)
	n := 0
	err := c.Import(context.Background(), Range{}, nil, func(Record) error { n++; return stop })
	if err != stop || n != 1 {
		t.Fatalf("%d records, %v; want 1 and emit's own error", n, err)
	}
}
