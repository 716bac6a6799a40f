package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/internal/localcluster"
)

// envExports are the shell exports that point the nomad, consul and mc CLIs
// at the cluster.
func envExports(s *localcluster.State) string {
	scheme := "http" // of the placer and blob front a user starts beside the cluster
	if s.Secure != nil {
		scheme = "https"
	}
	out := fmt.Sprintf("export NOMAD_ADDR=%s\nexport CONSUL_HTTP_ADDR=%s\n", s.NomadAddr(), s.ConsulAddr())
	out += fmt.Sprintf("export HARVEST_PLACER_ADDR=%s://127.0.0.1:%d\nexport HARVEST_PROXY_ADDR=%s://127.0.0.1:%d\n", scheme, s.SparePort(0), scheme, s.SparePort(1))
	out += fmt.Sprintf("export HARVEST_BLOB_ADDR=127.0.0.1:%d\nexport HARVEST_BLOB_ADMIN_ADDR=%s://127.0.0.1:%d\nexport PATH=%s:$PATH\n",
		s.SparePort(2), scheme, s.SparePort(3), s.StackBin)
	if sec := s.Secure; sec != nil {
		// the CLIs and Harvest's clients trust the cluster's CA and use the
		// management tokens (an operator's shell)
		out += fmt.Sprintf("export NOMAD_CACERT=%s\nexport NOMAD_TOKEN=%s\nexport CONSUL_CACERT=%s\nexport CONSUL_HTTP_TOKEN=%s\nexport HARVEST_CACERT=%s\n",
			sec.CAFile, sec.NomadToken, sec.CAFile, sec.ConsulToken, sec.CAFile)
	}
	if s.PlacerToken != "" {
		out += fmt.Sprintf("export HARVEST_PLACER_TOKEN=%s\n", s.PlacerToken)
	}
	for i, m := range s.MinIO {
		out += fmt.Sprintf("export MC_HOST_%s=http://%s:%s@%s\n", mcAlias(i), m.AccessKey, m.SecretKey, m.HTTPAddr)
	}
	return out
}

func mcAlias(i int) string { return fmt.Sprintf("minio%d", i+1) }

func printSummary(w io.Writer, s *localcluster.State) {
	fmt.Fprintf(w, "\nHarvest local cluster (run folder %s)\n\n", s.RunDir)
	fmt.Fprintf(w, "  Nomad UI/API     %s/ui   (server pid %d)\n", s.NomadAddr(), s.NomadServer.PID)
	fmt.Fprintf(w, "  Consul UI/API    %s/ui   (dev server pid %d)\n", consulURL(s), s.ConsulServer.PID)
	if sec := s.Secure; sec != nil {
		fmt.Fprintf(w, "  Secure           TLS (CA %s), Consul and Nomad ACLs default-deny; management tokens in env.sh\n", sec.CAFile)
	}
	for i, c := range s.NomadClients {
		fmt.Fprintf(w, "  Nomad client     %-9s http://%s  tenant=%s env=%s rack=%s  consul agent %s\n",
			c.Name, c.HTTPAddr, c.Meta[contract.NodeTenant], c.Meta[contract.NodeEnvironment], c.Meta[contract.NodeRack], s.ConsulClients[i].HTTPAddr)
	}
	for i, m := range s.MinIO {
		fmt.Fprintf(w, "  MinIO (S3)       %-9s http://%s  access key %s  (mc alias %s)\n", m.Node, m.HTTPAddr, m.AccessKey, mcAlias(i))
	}
	fmt.Fprintf(w, "\n  Logs             %s\n", filepath.Join(s.RunDir, "logs"))
	fmt.Fprintf(w, "  Shell setup      source %s\n", filepath.Join(s.RunDir, "env.sh"))
	fmt.Fprintf(w, "  Stop             make cluster-down\n\n")
}

// consulURL is the Consul server's URL.
func consulURL(s *localcluster.State) string {
	if a := s.ConsulAddr(); strings.Contains(a, "://") {
		return a
	}
	return "http://" + s.ConsulAddr()
}
