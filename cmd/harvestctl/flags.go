package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/internal/connect"
	"github.com/harvest-platform/harvest/kv"
)

// consulFlags are the flags of every command that reads or writes history.
// The token and TLS files come from the environment (CONSUL_HTTP_TOKEN,
// CONSUL_CACERT, CONSUL_CLIENT_CERT, ...), as for the consul CLI.
type consulFlags struct{ addr, prefix string }

func (c *consulFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.addr, "consul-addr", "", "Consul HTTP API address (default: CONSUL_HTTP_ADDR, else localhost:8500)")
	fs.StringVar(&c.prefix, "prefix", history.DefaultPrefix, "Consul KV prefix of Harvest's state")
}

func (c *consulFlags) store() (*history.Store, error) {
	client, err := connect.Consul{Address: c.addr}.Client()
	if err != nil {
		return nil, err
	}
	return history.NewStore(kv.NewConsul(client), c.prefix), nil
}

// openInput opens a file, or standard input for "-".
func openInput(path string) (io.ReadCloser, error) {
	if path == "-" {
		return io.NopCloser(os.Stdin), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// oneArg returns the single positional argument.
func oneArg(fs *flag.FlagSet, what string) (string, error) {
	if fs.NArg() != 1 {
		return "", fmt.Errorf("want exactly one %s argument, got %d", what, fs.NArg())
	}
	return fs.Arg(0), nil
}

// envOr is the environment's value of key, or def.
func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
