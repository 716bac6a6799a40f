//go:build acceptance

package acceptance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"
)

// placerCall makes one request to the placer's API with a token ("" none).
func placerCall(t *testing.T, api, token, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, api+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := harvestHTTP().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// kvExists reads a key of Harvest's state with the management token.
func kvExists(t *testing.T, key string) bool {
	t.Helper()
	pair, _, err := cluster.ConsulClient().KV().Get(key, nil)
	if err != nil {
		t.Fatal(err)
	}
	return pair != nil
}

// TestSecurePlacerRefusesChangesWithoutTheCapability: on the secure
// cluster, the issue's `PUT /v1/policy {"reserve_cpu":0,...}` is refused
// without a token (401), with a token Nomad does not know (401), and with a
// valid Nomad token that may submit jobs but lacks the Harvest capability
// (403): each answer says why, and the policy document is not written. A
// Nomad token with the capability, and the placer's own token, may.
func TestSecurePlacerRefusesChangesWithoutTheCapability(t *testing.T) {
	requireSecure(t)
	api, _, _ := startPlacerWith(t, "harvest/", "", "")
	const key = "harvest/declarations/policy"
	if kvExists(t, key) {
		t.Fatalf("%s exists before the test", key)
	}
	zero := `{"reserve_cpu":0,"reserve_memory_mb":0}`
	for _, c := range []struct {
		who, token string
		want       int
		says       string
	}{
		{"no token", "", 401, "needs a token with write access"},
		{"a made-up token", "00000000-0000-4000-8000-000000000000", 401, "Nomad does not know it"},
		{"a job submitter's Nomad token", tokens.submitter, 403, "permission denied"},
		{"the placer's own Nomad token", tokens.placerNomad, 403, "permission denied"},
	} {
		code, body := placerCall(t, api, c.token, http.MethodPut, "/v1/policy", zero)
		if code != c.want || !strings.Contains(body, c.says) {
			t.Errorf("PUT /v1/policy with %s: %d %s, want %d saying %q", c.who, code, body, c.want, c.says)
		}
		if kvExists(t, key) {
			t.Fatalf("PUT /v1/policy with %s wrote %s", c.who, key)
		}
		if code, body := placerCall(t, api, c.token, http.MethodPost, "/v1/classes/refresh", ""); code != c.want {
			t.Errorf("POST /v1/classes/refresh with %s: %d %s, want %d", c.who, code, body, c.want)
		}
	}
	// reads stay open (acl.anonymous_read defaults to true); health always
	if code, _ := placerCall(t, api, "", http.MethodGet, "/v1/health", ""); code != 200 {
		t.Errorf("health: %d", code)
	}
	// an operator's Nomad token with the capability may; so may the placer's own token
	harmless := `{"max_classes":8}`
	for who, token := range map[string]string{"an operator's Nomad token": tokens.operator, "the placer's own token": placerToken} {
		if code, body := placerCall(t, api, token, http.MethodPut, "/v1/policy", harmless); code != 200 {
			t.Fatalf("PUT /v1/policy with %s: %d %s", who, code, body)
		}
		if !kvExists(t, key) {
			t.Fatalf("the allowed PUT with %s wrote nothing", who)
		}
		if code, body := placerCall(t, api, token, http.MethodDelete, "/v1/policy", ""); code != 204 {
			t.Fatalf("DELETE /v1/policy with %s: %d %s", who, code, body)
		}
	}
}

// proxyPut sends a raw job request to the admission proxy as a caller.
func proxyPut(t *testing.T, proxyAddr, token, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, "https://"+proxyAddr+path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("X-Nomad-Token", token)
	}
	resp, err := harvestHTTP().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// registered reads a job with the management token (nil: not there).
func registered(t *testing.T, namespace, id string) *nomadapi.Job {
	t.Helper()
	job, _, err := nomadClient(t).Jobs().Info(id, &nomadapi.QueryOptions{Namespace: namespace})
	if err != nil {
		if strings.Contains(err.Error(), "404") {
			return nil
		}
		t.Fatal(err)
	}
	return job
}

func tinyJob(id, namespace, meta string) string {
	return fmt.Sprintf(`{"Job":{"ID":%q,"Name":%q,"Type":"batch","Namespace":%q%s,"TaskGroups":[{"Name":"g","Count":1,
 "Tasks":[{"Name":"t","Driver":"harvest","Config":{"command":"/bin/true"},"Resources":{"CPU":100,"MemoryMB":32}}]}]}}`,
		id, id, namespace, meta)
}

// TestSecureProxyForwardsOnlyTheCallersTokenAndCannotBeTricked: through
// the admission proxy on the secure cluster, a job sent without a token is
// refused by Nomad (the proxy lends none of its own) and nothing is
// registered; a ?namespace= query naming a harvested namespace while the
// body names another, and a body whose keys differ only in case, are both
// rewritten as harvested jobs; an ambiguous body is refused and nothing
// registered; and a job carrying Harvest's stage meta sent straight to
// Nomad gets no stage job from the placer.
func TestSecureProxyForwardsOnlyTheCallersTokenAndCannotBeTricked(t *testing.T) {
	requireSecure(t)
	nomad := nomadClient(t)
	if _, err := nomad.Namespaces().Register(&nomadapi.Namespace{Name: "batch", Description: "every job harvested"}, nil); err != nil {
		t.Fatal(err)
	}
	batchUser, err := makeNomadToken("batch-user-"+uniqueName("p"), `namespace "batch" { policy = "write" }`+"\n"+`namespace "default" { policy = "write" }`)
	if err != nil {
		t.Fatal(err)
	}
	_, proxyAddr, _ := startPlacerWith(t, "harvest/", `namespaces = ["batch"]`, "")

	// no token: Nomad refuses, nothing registered
	noToken := uniqueName("acc-notoken")
	if code, body := proxyPut(t, proxyAddr, "", "/v1/jobs", tinyJob(noToken, "default", `,"Meta":{"harvest":"true"}`)); code != 403 {
		t.Errorf("register without a token through the proxy: %d %s, want Nomad's 403", code, body)
	}
	if registered(t, "default", noToken) != nil {
		t.Fatal("a job sent without a token was registered: the proxy lent its own")
	}

	// ?namespace= names the harvested namespace, the body another
	viaQuery := uniqueName("acc-nsquery")
	purgeJobIn(t, "batch", viaQuery)
	if code, body := proxyPut(t, proxyAddr, batchUser, "/v1/jobs?namespace=batch", tinyJob(viaQuery, "default", "")); code != 200 {
		t.Fatalf("register with ?namespace=batch: %d %s", code, body)
	}
	if job := registered(t, "batch", viaQuery); job == nil || job.Meta["harvest_classes"] == "" {
		t.Fatalf("the ?namespace= job reached Nomad unrewritten: %+v", job)
	}

	// keys that differ only in case
	lower := uniqueName("acc-lowercase")
	purgeJob(t, lower)
	body := strings.Replace(strings.Replace(tinyJob(lower, "default", `,"meta":{"harvest":"true"}`), `"Job"`, `"job"`, 1), `"TaskGroups"`, `"taskgroups"`, 1)
	if code, resp := proxyPut(t, proxyAddr, tokens.submitter, "/v1/jobs", body); code != 200 {
		t.Fatalf("register with lower-case keys: %d %s", code, resp)
	}
	if job := registered(t, "default", lower); job == nil || job.Meta["harvest_classes"] == "" {
		t.Fatalf("the lower-case job reached Nomad unrewritten: %+v", job)
	}

	// an ambiguous body: refused, nothing registered
	ambiguous := uniqueName("acc-ambiguous")
	twice := `{"Job":{"ID":"` + ambiguous + `","Type":"batch","TaskGroups":[{"Name":"g","Tasks":[{"Name":"t","Driver":"harvest","Config":{"command":"/bin/true"}}]}]},` +
		`"job":{"Meta":{"harvest":"true"}}}`
	if code, resp := proxyPut(t, proxyAddr, tokens.submitter, "/v1/jobs", twice); code != 400 || !strings.Contains(resp, "both name the field Job") {
		t.Errorf("ambiguous body: %d %s, want 400", code, resp)
	}
	if registered(t, "default", ambiguous) != nil {
		t.Fatal("the ambiguous job was registered")
	}

	// a job with Harvest's stage meta sent straight to Nomad: no stage job
	direct := uniqueName("acc-direct")
	purgeJob(t, direct)
	purgeJob(t, direct+".b")
	src := writeJob(t, fmt.Sprintf(`
job %q {
  type = "batch"
  meta {
    harvest          = "true"
    harvest_job_type = "medium"
    harvest_classes  = "none"
    harvest_stages   = "{\"b\":1}"
  }
  group "a" {
    task "t" {
      driver = "harvest"
      config {
        command = "/bin/true"
      }
      resources {
        cpu    = 100
        memory = 32
      }
    }
  }
  group "b" {
    count = 0
    meta {
      harvest_after = "a"
    }
    task "t" {
      driver = "harvest"
      config {
        command = "/bin/true"
      }
      resources {
        cpu    = 100
        memory = 32
      }
    }
  }
}`, direct))
	cmd := exec.Command(filepath.Join(stack, "nomad"), "job", "run", "-detach", src)
	cmd.Env = append(append(os.Environ(), "NOMAD_ADDR="+cluster.NomadAddr()), nomadEnv(tokens.submitter)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nomad job run straight at Nomad: %v\n%s", err, out)
	}
	waitCompleted(t, direct, 1, 2*time.Minute)
	time.Sleep(15 * time.Second) // several sequencer passes (every 2 s), past its settle time
	if registered(t, "default", direct+".b") != nil {
		t.Fatal("the placer started a stage job for a job it never admitted")
	}
}

// purgeJobIn purges a job of a namespace at cleanup.
func purgeJobIn(t *testing.T, namespace, id string) {
	t.Cleanup(func() {
		_, _, _ = nomadClient(t).Jobs().Deregister(id, true, &nomadapi.WriteOptions{Namespace: namespace})
	})
}

// TestSecureHarvestedTaskCannotReadStorageCredentialsOrWriteHarvestKV: a
// harvested task on the secure cluster tries, with everything it has (its
// workload identity as NOMAD_TOKEN, no Consul token), to read the storage
// nodes' credentials from Nomad variables and to write Harvest's Consul KV
// through its node's Consul agent. Both are refused (403), while its
// identity does read its own job's variable (so the refusal is the ACLs',
// not a broken token); the key is not written and the credentials are as
// they were.
func TestSecureHarvestedTaskCannotReadStorageCredentialsOrWriteHarvestKV(t *testing.T) {
	sec := requireSecure(t)
	job := uniqueName("acc-curious")
	purgeJob(t, job)
	c := nomadClient(t)
	own := "nomad/jobs/" + job
	if _, _, err := c.Variables().Create(&nomadapi.Variable{Path: own, Items: nomadapi.VariableItems{"mine": "yes"}}, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Variables().Delete(own, nil) })
	before, _, err := c.Variables().Read("nomad/jobs/harvest-storage", nil)
	if err != nil {
		t.Fatal(err)
	}
	node := cluster.NomadClients[0]
	script := fmt.Sprintf(`
code() { curl -s -o /dev/null -w '%%''{http_code}' --cacert %[1]q "$@"; }
echo "kv_put=$(code -X PUT --data pwned https://%[2]s/v1/kv/harvest/pwned)"
echo "kv_put_env_token=$(code -X PUT --data pwned -H "X-Consul-Token: $CONSUL_HTTP_TOKEN" https://%[2]s/v1/kv/harvest/pwned)"
echo "storage_var=$(code -H "X-Nomad-Token: $NOMAD_TOKEN" %[3]s/v1/var/nomad/jobs/harvest-storage)"
echo "own_var=$(code -H "X-Nomad-Token: $NOMAD_TOKEN" %[3]s/v1/var/%[4]s)"
`, sec.CAFile, node.ConsulAgent, cluster.NomadAddr(), own)
	src := writeJob(t, fmt.Sprintf(`
job %q {
  type = "batch"
  meta {
    harvest = "true"
  }
  constraint {
    attribute = "${node.unique.name}"
    value     = %q
  }
  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    task "t" {
      driver = "harvest"
      identity {
        env = true
      }
      config {
        command = "/bin/sh"
        args    = ["-c", %s]
      }
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}`, job, node.Name, hclString(script)))
	nomadCLI(t, "job", "run", "-detach", src)
	allocs := waitAllocs(t, job, 1, 2*time.Minute, complete)
	alloc, _, err := c.Allocations().Info(allocs[0].ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := c.AllocFS().Cat(alloc, "alloc/logs/t.stdout.0", nil)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(rd)
	t.Logf("the harvested task saw:\n%s", out)
	for _, want := range []string{"kv_put=403", "kv_put_env_token=403", "storage_var=403", "own_var=200"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("task output lacks %q", want)
		}
	}
	if kvExists(t, "harvest/pwned") {
		t.Fatal("a harvested task wrote Harvest's Consul KV")
	}
	after, _, err := c.Variables().Read("nomad/jobs/harvest-storage", nil)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(after.Items)
	b, _ := json.Marshal(before.Items)
	if !bytes.Equal(a, b) || after.ModifyIndex != before.ModifyIndex {
		t.Fatal("the storage credentials changed")
	}
}

// hclString quotes s for an HCL2 job file. Neither "%{" nor "${" may be in
// s: HCL reads them as template directives, in the job file and again when
// the driver decodes its task config.
func hclString(s string) string {
	if strings.Contains(s, "%{") || strings.Contains(s, "${") {
		panic("hclString: template sequence in " + s)
	}
	return strconv.Quote(s)
}
