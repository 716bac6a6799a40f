package harvestcg

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestCPUListRoundTrip(t *testing.T) {
	for in, want := range map[string]string{"0-3": "0-3", "0,2-3,8\n": "0,2-3,8", "3,1,2": "1-3", "": "", "5": "5"} {
		cpus, err := ParseCPUList(in)
		if err != nil || FormatCPUList(cpus) != want {
			t.Errorf("%q: %v %q, want %q", in, cpus, FormatCPUList(cpus), want)
		}
	}
	for _, bad := range []string{"a", "3-1", "-1", "1-x"} {
		if _, err := ParseCPUList(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestCpusetPlanKeepsWholeCPUsAndQuotasOnlyAtNothing(t *testing.T) {
	all := []int{0, 1, 2, 3}
	for _, c := range []struct {
		cores float64
		cpus  []int
		quota int64
	}{
		{-1, all, -1}, {4, all, -1}, {6.5, all, -1}, // no cap
		{3.99, []int{1, 2, 3}, -1}, {1.5, []int{3}, -1}, {1, []int{3}, -1}, // whole CPUs, highest-numbered
		{0.4, []int{3}, -1}, {0, []int{3}, minQuota}, // below one CPU: one CPU; nothing: stopped
	} {
		cpus, quota := CpusetPlan(all, c.cores, 100000)
		if !slices.Equal(cpus, c.cpus) || quota != c.quota {
			t.Errorf("CpusetPlan(%v): %v %d, want %v %d", c.cores, cpus, quota, c.cpus, c.quota)
		}
	}
}

func cpusetTree(t *testing.T) string {
	root := v1Tree(t, true)
	for p, c := range map[string]string{
		"cpuset/cpuset.effective_cpus": "0-3\n", "cpuset/cpuset.cpus": "0-3\n", "cpuset/cpuset.effective_mems": "0\n",
		"cpuset/harvest/cpuset.cpus": "", "cpuset/harvest/cpuset.mems": "", "cpuset/harvest/cgroup.procs": "",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755)
		if err := os.WriteFile(filepath.Join(root, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestV1CapByCpusetConfinesTheTasksToWholeCPUs(t *testing.T) {
	root := cpusetTree(t)
	p, err := Open(Options{Root: root, Path: "/harvest"})
	if err != nil || p.CapMethod() != CapCpuset {
		t.Fatalf("open: %v %s", err, p.CapMethod())
	}
	if read(t, root, "cpuset/harvest/cpuset.cpus") != "0-3" || read(t, root, "cpuset/harvest/cpuset.mems") != "0" {
		t.Fatalf("cpuset %q mems %q", read(t, root, "cpuset/harvest/cpuset.cpus"), read(t, root, "cpuset/harvest/cpuset.mems"))
	}
	for _, c := range []struct {
		cores      float64
		cpus, quot string
		now        float64
	}{{2.5, "2-3", "-1", 2}, {0.4, "3", "-1", 1}, {0, "3", "1000", 0.01}, {1.2, "3", "-1", 1}, {5, "0-3", "-1", -1}, {-1, "0-3", "-1", -1}} {
		now, err := p.SetCap(c.cores)
		if err != nil || now != c.now || read(t, root, "cpuset/harvest/cpuset.cpus") != c.cpus || read(t, root, "cpu/harvest/cpu.cfs_quota_us") != c.quot {
			t.Errorf("SetCap(%.2f): cpus %s quota %s now %.2f %v, want %s %s %.2f", c.cores, read(t, root, "cpuset/harvest/cpuset.cpus"),
				read(t, root, "cpu/harvest/cpu.cfs_quota_us"), now, err, c.cpus, c.quot, c.now)
		}
	}
	// the task's processes go into the cpuset parent itself
	if n, err := p.Adopt("nomad-a.t", procsOf(filepath.Join(root, "freezer/nomad/nomad-a.t/cgroup.procs")), 0); err != nil || n != 2 {
		t.Fatalf("adopted %d: %v", n, err)
	}
	if got := read(t, root, "cpuset/harvest/cgroup.procs"); got != "101\n102" {
		t.Errorf("cpuset procs %q", got)
	}
	// a restarted driver keeps the CPUs its tasks were confined to
	os.WriteFile(filepath.Join(root, "cpuset/harvest/cpuset.cpus"), []byte("3\n"), 0o644)
	if _, err := Open(Options{Root: root, Path: "/harvest"}); err != nil || read(t, root, "cpuset/harvest/cpuset.cpus") != "3" {
		t.Errorf("reopened: cpus %q %v", read(t, root, "cpuset/harvest/cpuset.cpus"), err)
	}
	// asked for the quota, the cpuset stays whole
	q, err := Open(Options{Root: root, Path: "/harvest", Cap: CapQuota})
	if err != nil {
		t.Fatal(err)
	}
	if now, _ := q.SetCap(1.5); now != 1.5 || read(t, root, "cpu/harvest/cpu.cfs_quota_us") != "150000" {
		t.Errorf("quota cap %.2f %s", now, read(t, root, "cpu/harvest/cpu.cfs_quota_us"))
	}
	if _, err := Open(Options{Root: root, Path: "/harvest", Cap: "cgroup"}); err == nil {
		t.Error("an unknown cap method accepted")
	}
}

func TestCapByCpusetFallsBackToTheQuotaWithoutCpuset(t *testing.T) {
	p, err := Open(Options{Root: v1Tree(t, false), Path: "/harvest"})
	if err != nil || p.CapMethod() != CapQuota || !strings.Contains(strings.Join(p.Settings(), ";"), "capping by CFS quota") {
		t.Fatalf("%v %s %v", err, p.CapMethod(), p.Settings())
	}
	if now, _ := p.SetCap(1.5); now != 1.5 {
		t.Errorf("cap %.2f", now)
	}
}

// On a real cgroup v1 host, as root: a process adopted into the parent is
// confined to the CPUs of the cap.
func TestRealCgroupV1Cpuset(t *testing.T) {
	if os.Geteuid() != 0 || Detect("/sys/fs/cgroup") != V1 {
		t.Skip("needs root on a cgroup v1 host")
	}
	path := "/harvest-unit-cpuset-" + strconv.Itoa(os.Getpid())
	p, err := Open(Options{Root: "/sys/fs/cgroup", Path: path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	if p.CapMethod() != CapCpuset {
		t.Skipf("no cpuset hierarchy here: %v", p.Settings())
	}
	cmd := startSleep(t)
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); _ = p.Release("task") }()
	if _, err := p.Adopt("task", func() ([]int, error) { return []int{cmd.Process.Pid}, nil }, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := p.SetCap(0.5); err != nil {
		t.Fatal(err)
	}
	last := p.allowed[len(p.allowed)-1]
	status, _ := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/status")
	if !strings.Contains(string(status), "Cpus_allowed_list:\t"+strconv.Itoa(last)+"\n") {
		t.Fatalf("the process may run on more than CPU %d:\n%s", last, status)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
}
