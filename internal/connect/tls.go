package connect

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-cleanhttp"
)

// ListenerTLS is the `tls` block of one of Harvest's own listeners (the
// placer's API and proxy, the blob front's S3 and admin listeners). With
// cert_file and key_file the listener speaks TLS 1.2 or later only; with
// client_ca_file too, it also wants a client certificate signed by that CA
// (mutual TLS, as Nomad's verify_https_client). The key pair is read again
// when its files change (a Nomad template renewing it), at the next
// handshake.
type ListenerTLS struct {
	CertFile     string `hcl:"cert_file,optional"`
	KeyFile      string `hcl:"key_file,optional"`
	ClientCAFile string `hcl:"client_ca_file,optional"`
}

// Enabled reports whether the listener speaks TLS.
func (t ListenerTLS) Enabled() bool { return t.CertFile != "" }

// Validate checks the files go together and load.
func (t ListenerTLS) Validate(block string) error {
	if (t.CertFile == "") != (t.KeyFile == "") {
		return fmt.Errorf("%s: cert_file and key_file go together", block)
	}
	if t.ClientCAFile != "" && t.CertFile == "" {
		return fmt.Errorf("%s: client_ca_file needs cert_file and key_file", block)
	}
	if !t.Enabled() {
		return nil
	}
	_, err := t.ServerConfig()
	if err != nil {
		return fmt.Errorf("%s: %w", block, err)
	}
	return nil
}

// ServerConfig is the listener's TLS configuration (nil when off).
func (t ListenerTLS) ServerConfig() (*tls.Config, error) {
	if !t.Enabled() {
		return nil, nil
	}
	kp := &keyPair{cert: t.CertFile, key: t.KeyFile}
	if _, err := kp.get(nil); err != nil {
		return nil, err
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: kp.get}
	if t.ClientCAFile != "" {
		pool, err := loadPool(t.ClientCAFile)
		if err != nil {
			return nil, err
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// keyPair loads a certificate and key, again whenever either file's
// modification time changes.
type keyPair struct {
	cert, key string
	mu        sync.Mutex
	loaded    *tls.Certificate
	stamp     [2]time.Time
}

func (k *keyPair) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	var stamp [2]time.Time
	for i, p := range []string{k.cert, k.key} {
		if st, err := os.Stat(p); err == nil {
			stamp[i] = st.ModTime()
		}
	}
	if k.loaded != nil && stamp == k.stamp {
		return k.loaded, nil
	}
	c, err := tls.LoadX509KeyPair(k.cert, k.key)
	if err != nil {
		if k.loaded != nil {
			return k.loaded, nil // half-written renewal: keep serving the old pair
		}
		return nil, fmt.Errorf("tls key pair: %w", err)
	}
	k.loaded, k.stamp = &c, stamp
	return k.loaded, nil
}

func loadPool(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no PEM certificate", path)
	}
	return pool, nil
}

// ClientTLS is how a client reaches Harvest's own HTTPS APIs: the CA to
// trust, and the certificate to present when the listener wants one.
type ClientTLS struct {
	CAFile, CertFile, KeyFile, ServerName string
	SkipVerify                            bool
}

// Environment variables for Harvest's own APIs, as NOMAD_* are for Nomad's.
const (
	EnvCACert        = "HARVEST_CACERT"
	EnvClientCert    = "HARVEST_CLIENT_CERT"
	EnvClientKey     = "HARVEST_CLIENT_KEY"
	EnvTLSServerName = "HARVEST_TLS_SERVER_NAME"
	EnvSkipVerify    = "HARVEST_SKIP_VERIFY"
	// EnvPlacerToken is the token sent to the placer's API; NOMAD_TOKEN
	// when it is unset (a Nomad token with the Harvest capability).
	EnvPlacerToken = "HARVEST_PLACER_TOKEN"
	// EnvBlobAdminToken is the token sent to the blob front's admin API.
	EnvBlobAdminToken = "HARVEST_BLOB_ADMIN_TOKEN"
)

// ClientTLSFromEnv reads HARVEST_CACERT, HARVEST_CLIENT_CERT,
// HARVEST_CLIENT_KEY, HARVEST_TLS_SERVER_NAME and HARVEST_SKIP_VERIFY.
func ClientTLSFromEnv() ClientTLS {
	skip, _ := strconv.ParseBool(os.Getenv(EnvSkipVerify))
	return ClientTLS{CAFile: os.Getenv(EnvCACert), CertFile: os.Getenv(EnvClientCert), KeyFile: os.Getenv(EnvClientKey),
		ServerName: os.Getenv(EnvTLSServerName), SkipVerify: skip}
}

// PlacerToken is HARVEST_PLACER_TOKEN, else NOMAD_TOKEN.
func PlacerToken() string {
	if t := os.Getenv(EnvPlacerToken); t != "" {
		return t
	}
	return os.Getenv("NOMAD_TOKEN")
}

// Config is the client's TLS configuration.
func (c ClientTLS) Config() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.ServerName, InsecureSkipVerify: c.SkipVerify}
	if c.CAFile != "" {
		pool, err := loadPool(c.CAFile)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		return nil, errors.New("a client certificate needs its key, and the other way round")
	}
	if c.CertFile != "" {
		kp, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{kp}
	}
	return cfg, nil
}

// HTTPClient is a pooled HTTP client with the TLS configuration and the
// timeout (0: none).
func (c ClientTLS) HTTPClient(timeout time.Duration) (*http.Client, error) {
	cfg, err := c.Config()
	if err != nil {
		return nil, err
	}
	hc := cleanhttp.DefaultPooledClient()
	hc.Transport.(*http.Transport).TLSClientConfig = cfg
	hc.Timeout = timeout
	return hc, nil
}

// Wrap puts TLS on l when the block enables it (l itself otherwise).
func (t ListenerTLS) Wrap(l net.Listener) (net.Listener, error) {
	cfg, err := t.ServerConfig()
	if err != nil || cfg == nil {
		return l, err
	}
	return tls.NewListener(l, cfg), nil
}

// Over lays o's non-empty fields over t.
func (t ListenerTLS) Over(o ListenerTLS) ListenerTLS {
	for _, f := range []struct{ d, s *string }{{&t.CertFile, &o.CertFile}, {&t.KeyFile, &o.KeyFile}, {&t.ClientCAFile, &o.ClientCAFile}} {
		if *f.s != "" {
			*f.d = *f.s
		}
	}
	return t
}

// layer is one setting of a layer over another: to is set to value when
// value is set.
type layer struct {
	to    *string
	value string
}

// overlay applies each layer: a later layer (flags over a file, a block over
// the environment) wins only where it says something.
func overlay(layers ...layer) {
	for _, l := range layers {
		if l.value != "" {
			*l.to = l.value
		}
	}
}
