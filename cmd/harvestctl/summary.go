package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/harvest-platform/harvest/internal/localcluster"
)

// envExports are the shell exports that point the nomad, consul and mc CLIs
// at the cluster.
func envExports(s *localcluster.State) string {
	out := fmt.Sprintf("export NOMAD_ADDR=%s\nexport CONSUL_HTTP_ADDR=%s\nexport HARVEST_PLACER_ADDR=http://127.0.0.1:%d\nexport HARVEST_PROXY_ADDR=http://127.0.0.1:%d\nexport HARVEST_BLOB_ADDR=127.0.0.1:%d\nexport HARVEST_BLOB_ADMIN_ADDR=http://127.0.0.1:%d\nexport PATH=%s:$PATH\n",
		s.NomadAddr(), s.ConsulAddr(), s.SparePort(0), s.SparePort(1), s.SparePort(2), s.SparePort(3), s.StackBin)
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
	fmt.Fprintf(w, "  Consul UI/API    http://%s/ui   (dev server pid %d)\n", s.ConsulAddr(), s.ConsulServer.PID)
	for i, c := range s.NomadClients {
		fmt.Fprintf(w, "  Nomad client     %-9s http://%s  tenant=%s env=%s rack=%s  consul agent %s\n",
			c.Name, c.HTTPAddr, c.Meta["harvest_tenant"], c.Meta["harvest_environment"], c.Meta["harvest_rack"], s.ConsulClients[i].HTTPAddr)
	}
	for i, m := range s.MinIO {
		fmt.Fprintf(w, "  MinIO (S3)       %-9s http://%s  access key %s  (mc alias %s)\n", m.Node, m.HTTPAddr, m.AccessKey, mcAlias(i))
	}
	fmt.Fprintf(w, "\n  Logs             %s\n", filepath.Join(s.RunDir, "logs"))
	fmt.Fprintf(w, "  Shell setup      source %s\n", filepath.Join(s.RunDir, "env.sh"))
	fmt.Fprintf(w, "  Stop             make cluster-down\n\n")
}
