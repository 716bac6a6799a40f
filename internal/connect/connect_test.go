package connect

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/internal/pki"
)

func TestNomadConfigTakesTheEnvironmentThenTheBlock(t *testing.T) {
	t.Setenv("NOMAD_ADDR", "https://nomad.example:4646")
	t.Setenv("NOMAD_TOKEN", "env-token")
	t.Setenv("NOMAD_CACERT", "/env/ca.pem")
	t.Setenv("NOMAD_CLIENT_CERT", "/env/cli.pem")
	t.Setenv("NOMAD_CLIENT_KEY", "/env/cli-key.pem")
	t.Setenv("NOMAD_TLS_SERVER_NAME", "server.global.nomad")
	c, err := Nomad{}.APIConfig()
	if err != nil {
		t.Fatal(err)
	}
	if c.Address != "https://nomad.example:4646" || c.SecretID != "env-token" || c.TLSConfig.CACert != "/env/ca.pem" ||
		c.TLSConfig.ClientCert != "/env/cli.pem" || c.TLSConfig.ClientKey != "/env/cli-key.pem" || c.TLSConfig.TLSServerName != "server.global.nomad" {
		t.Fatalf("environment not taken: %+v %+v", c, c.TLSConfig)
	}
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte("file-token\n"), 0o600)
	c, err = Nomad{Address: "https://other:4646", Token: "block-token", CAFile: "/block/ca.pem"}.Over(Nomad{TokenFile: tokenFile}).APIConfig()
	if err != nil {
		t.Fatal(err)
	}
	if c.Address != "https://other:4646" || c.SecretID != "file-token" || c.TLSConfig.CACert != "/block/ca.pem" || c.TLSConfig.ClientCert != "/env/cli.pem" {
		t.Fatalf("block over environment: %+v %+v", c, c.TLSConfig)
	}
}

func TestNomadTransportCarriesTheTLSSettings(t *testing.T) {
	dir := t.TempDir()
	ca, _ := NewTestCA(t, dir)
	tr, err := Nomad{Address: "https://127.0.0.1:4646", CAFile: ca, TLSServerName: "server.global.nomad"}.Transport()
	if err != nil {
		t.Fatal(err)
	}
	if tr.TLSClientConfig == nil || tr.TLSClientConfig.RootCAs == nil || tr.TLSClientConfig.ServerName != "server.global.nomad" {
		t.Fatalf("transport TLS %+v", tr.TLSClientConfig)
	}
	if tr, err := (Nomad{Address: "http://127.0.0.1:4646"}).Transport(); err != nil || tr == nil {
		t.Fatalf("plain transport: %v", err)
	}
}

// NewTestCA writes a CA certificate into dir and returns its path.
func NewTestCA(t *testing.T, dir string) (string, *pki.CA) {
	t.Helper()
	ca, err := pki.NewCA("test CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	path, err := ca.WriteCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	return path, ca
}

func TestConsulConfigTakesTheEnvironmentThenTheBlock(t *testing.T) {
	t.Setenv("CONSUL_HTTP_ADDR", "127.0.0.1:8501")
	t.Setenv("CONSUL_HTTP_TOKEN", "env-token")
	t.Setenv("CONSUL_HTTP_SSL", "true")
	t.Setenv("CONSUL_CACERT", "/env/ca.pem")
	c := Consul{}.APIConfig()
	if c.Address != "127.0.0.1:8501" || c.Token != "env-token" || c.Scheme != "https" || c.TLSConfig.CAFile != "/env/ca.pem" {
		t.Fatalf("environment not taken: %+v", c)
	}
	c = Consul{Address: "https://consul:8501", Token: "block", CertFile: "/b/c.pem", KeyFile: "/b/k.pem"}.APIConfig()
	if c.Address != "https://consul:8501" || c.Token != "block" || c.TLSConfig.CertFile != "/b/c.pem" || c.TLSConfig.CAFile != "/env/ca.pem" {
		t.Fatalf("block over environment: %+v", c)
	}
	if (Consul{}).KVPrefix() != DefaultPrefix || (Consul{Prefix: "x/"}).KVPrefix() != "x/" {
		t.Fatal("prefix")
	}
	if err := (Consul{CertFile: "/x"}).Validate("consul"); err == nil {
		t.Fatal("cert without key accepted")
	}
}

// TestListenerTLSServesOnlyTLSAndWantsClientCerts starts a listener with
// mutual TLS: a client trusting the CA with a certificate gets through,
// one without a certificate or speaking plain HTTP does not.
func TestListenerTLSServesOnlyTLSAndWantsClientCerts(t *testing.T) {
	dir := t.TempDir()
	ca, err := pki.NewCA("test CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	caFile, _ := ca.WriteCA(dir)
	srvLeaf, _ := ca.Issue("server", []string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1")}, time.Hour)
	cert, key, _ := srvLeaf.Write(dir, "server")
	cliLeaf, _ := ca.Issue("client", nil, nil, time.Hour)
	cliCert, cliKey, _ := cliLeaf.Write(dir, "client")

	lt := ListenerTLS{CertFile: cert, KeyFile: key, ClientCAFile: caFile}
	if err := lt.Validate("tls"); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tl, err := lt.Wrap(l)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }),
		ErrorLog: nil}
	go srv.Serve(tl)
	defer srv.Close()
	url := "https://" + l.Addr().String() + "/"

	get := func(c ClientTLS) error {
		hc, err := c.HTTPClient(5 * time.Second)
		if err != nil {
			return err
		}
		resp, err := hc.Get(url)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}
	if err := get(ClientTLS{CAFile: caFile, CertFile: cliCert, KeyFile: cliKey}); err != nil {
		t.Fatalf("client with a certificate: %v", err)
	}
	if err := get(ClientTLS{CAFile: caFile}); err == nil {
		t.Fatal("a client without a certificate got through")
	}
	if err := get(ClientTLS{CertFile: cliCert, KeyFile: cliKey}); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("a client not trusting the CA: %v", err)
	}
	if resp, err := http.Get("http://" + l.Addr().String() + "/"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("plain HTTP was served")
		}
	}
	// Without client_ca_file, TLS alone.
	cfg, _ := ListenerTLS{CertFile: cert, KeyFile: key}.ServerConfig()
	if cfg.ClientAuth != tls.NoClientCert || cfg.MinVersion != tls.VersionTLS12 {
		t.Fatalf("server config %+v", cfg)
	}
}
