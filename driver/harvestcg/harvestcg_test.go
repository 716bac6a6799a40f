package harvestcg

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/internal/proc"
)

// tree writes a fake cgroup tree: path -> content, every file the kernel
// would offer.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func read(t *testing.T, root, p string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, p))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func v1Tree(t *testing.T, idle bool) string {
	files := map[string]string{
		"cpu/cpu.shares": "1024", "cpuacct/cpuacct.usage": "0", "blkio/blkio.reset_stats": "",
		"cpu/harvest/cpu.shares": "1024", "cpu/harvest/cpu.cfs_period_us": "100000", "cpu/harvest/cpu.cfs_quota_us": "-1",
		"cpu/harvest/cpu.stat":               "nr_periods 10\nnr_throttled 4\nthrottled_time 250000000\n",
		"cpuacct/harvest/cpuacct.usage":      "1500000000\n",
		"blkio/harvest/blkio.weight":         "500",
		"cpu/harvest/nomad-a.t/cgroup.procs": "", "cpu/harvest/nomad-a.t/cpu.shares": "1024",
		"cpuacct/harvest/nomad-a.t/cgroup.procs": "", "blkio/harvest/nomad-a.t/cgroup.procs": "",
		"freezer/nomad/nomad-a.t/cgroup.procs": "101\n102\n",
	}
	if idle {
		files["cpu/harvest/cpu.idle"] = "0"
	}
	return tree(t, files)
}

func TestV1ParentLowestWeightIdleAndQuota(t *testing.T) {
	root := v1Tree(t, true)
	if v := Detect(root); v != V1 {
		t.Fatalf("detected %s", v)
	}
	p, err := Open(Options{Root: root, Path: "/harvest", Idle: true})
	if err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]string{
		"cpu/harvest/cpu.shares": "2", "cpu/harvest/cpu.idle": "1", "cpu/harvest/cpu.cfs_period_us": "100000",
		"cpu/harvest/cpu.cfs_quota_us": "-1", "blkio/harvest/blkio.weight": "10",
	} {
		if got := read(t, root, f); got != want {
			t.Errorf("%s = %q, want %q", f, got, want)
		}
	}
	// opened again (a restarted driver): an idle group stays idle
	os.WriteFile(filepath.Join(root, "cpu/harvest/cpu.shares"), []byte("3"), 0o644)
	if _, err := Open(Options{Root: root, Path: "/harvest", Idle: true}); err != nil || read(t, root, "cpu/harvest/cpu.idle") != "1" ||
		read(t, root, "cpu/harvest/cpu.shares") != "3" {
		t.Errorf("reopened: idle %s shares %s %v", read(t, root, "cpu/harvest/cpu.idle"), read(t, root, "cpu/harvest/cpu.shares"), err)
	}
	if got := strings.Join(p.Dirs(), " "); got != strings.Join([]string{root + "/cpu/harvest", root + "/cpuacct/harvest", root + "/blkio/harvest"}, " ") {
		t.Errorf("dirs %s", got)
	}
	for _, c := range []struct {
		cores float64
		quota string
		now   float64
	}{{0.5, "50000", 0.5}, {1.25, "125000", 1.25}, {0, "1000", 0.01}, {-1, "-1", -1}} {
		now, err := p.SetCap(c.cores)
		if err != nil || now != c.now || read(t, root, "cpu/harvest/cpu.cfs_quota_us") != c.quota {
			t.Errorf("SetCap(%.2f): quota %s now %.2f %v, want %s", c.cores, read(t, root, "cpu/harvest/cpu.cfs_quota_us"), now, err, c.quota)
		}
	}
	// an unchanged cap is not written again
	if _, err := p.SetCap(0.5); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "cpu/harvest/cpu.cfs_quota_us"), []byte("touched"), 0o644)
	if _, err := p.SetCap(0.5); err != nil || read(t, root, "cpu/harvest/cpu.cfs_quota_us") != "touched" {
		t.Error("an unchanged cap was written again")
	}
	st, err := p.Stats()
	if err != nil || st.CPUSeconds != 1.5 || st.ThrottledPeriods != 4 || st.ThrottledSeconds != 0.25 {
		t.Errorf("stats %+v %v", st, err)
	}
}

func TestV1WithoutCPUIdleKeepsMinimalShares(t *testing.T) {
	root := v1Tree(t, false)
	p, err := Open(Options{Root: root, Path: "harvest", Idle: true})
	if err != nil {
		t.Fatal(err)
	}
	if read(t, root, "cpu/harvest/cpu.shares") != "2" || !strings.Contains(strings.Join(p.Settings(), ";"), "cpu.idle: not offered") {
		t.Fatalf("shares %s settings %v", read(t, root, "cpu/harvest/cpu.shares"), p.Settings())
	}
}

func TestV1AdoptMovesEveryProcessIntoEachHierarchy(t *testing.T) {
	root := v1Tree(t, true)
	p, err := Open(Options{Root: root, Path: "/harvest"})
	if err != nil {
		t.Fatal(err)
	}
	n, err := p.Adopt("nomad-a.t", procsOf(filepath.Join(root, "freezer/nomad/nomad-a.t/cgroup.procs")), 256)
	if err != nil || n != 2 {
		t.Fatalf("adopted %d: %v", n, err)
	}
	for _, h := range []string{"cpu", "cpuacct", "blkio"} {
		if got := read(t, root, h+"/harvest/nomad-a.t/cgroup.procs"); got != "101\n102" {
			t.Errorf("%s procs %q", h, got)
		}
	}
	if read(t, root, "cpu/harvest/nomad-a.t/cpu.shares") != "256" {
		t.Error("task shares not set")
	}
	// a process forked since: only it is moved
	os.WriteFile(filepath.Join(root, "freezer/nomad/nomad-a.t/cgroup.procs"), []byte("101\n102\n103\n"), 0o644)
	if n, err := p.Adopt("nomad-a.t", procsOf(filepath.Join(root, "freezer/nomad/nomad-a.t/cgroup.procs")), 0); err != nil || n != 1 {
		t.Fatalf("second adopt moved %d: %v", n, err)
	}
	if _, err := p.TaskCgroupV2("x"); err == nil {
		t.Error("a v2 task cgroup on v1")
	}
}

// An exiting process stays in the cgroups it had until it is gone and the
// kernel moves it nowhere: Adopt leaves it (a task whose shell's first
// child was exiting used to be refused after ten passes), and names a
// process it cannot move.
func TestV1AdoptLeavesExitingProcessesAndNamesOnesItCannotMove(t *testing.T) {
	root := v1Tree(t, true)
	p, err := Open(Options{Root: root, Path: "/harvest"})
	if err != nil {
		t.Fatal(err)
	}
	// a task cgroup that takes no process, as the kernel does for one exiting
	for _, h := range []string{"cpu", "cpuacct", "blkio"} {
		procs := filepath.Join(root, h, "harvest/stuck.t/cgroup.procs")
		if err := os.MkdirAll(filepath.Dir(procs), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("/dev/null", procs); err != nil {
			t.Fatal(err)
		}
	}
	zombie := exec.Command("/bin/true")
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = zombie.Wait() }()
	for !proc.Exiting(zombie.Process.Pid) {
		time.Sleep(5 * time.Millisecond)
	}
	if n, err := p.Adopt("stuck.t", func() ([]int, error) { return []int{zombie.Process.Pid}, nil }, 0); err != nil || n != 0 {
		t.Fatalf("an exiting process: moved %d, %v (want nothing to move and no error)", n, err)
	}
	live := startSleep(t)
	defer func() { _ = live.Process.Kill(); _ = live.Wait() }()
	_, err = p.Adopt("stuck.t", func() ([]int, error) { return []int{zombie.Process.Pid, live.Process.Pid}, nil }, 0)
	if want := fmt.Sprintf("outside after 10 passes: %d (sleep, cpu cgroup ", live.Process.Pid); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("a process that stays outside: %v (want it named: %q)", err, want)
	}
}

func TestV2ParentWeightIdleMaxAndTaskScope(t *testing.T) {
	root := tree(t, map[string]string{
		"cgroup.controllers": "cpuset cpu io memory hugetlb pids rdma", "cgroup.subtree_control": "",
		"harvest.slice/cgroup.controllers": "cpuset cpu io memory pids", "harvest.slice/cgroup.subtree_control": "",
		"harvest.slice/cpu.weight": "100", "harvest.slice/cpu.idle": "0", "harvest.slice/cpu.max": "max 100000",
		"harvest.slice/io.weight": "default 100", "harvest.slice/cpu.stat": "usage_usec 2500000\nnr_throttled 7\nthrottled_usec 300000\n",
	})
	if v := Detect(root); v != V2 {
		t.Fatalf("detected %s", v)
	}
	p, err := Open(Options{Root: root, Path: "/harvest.slice", Idle: true})
	if err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]string{
		"cgroup.subtree_control": "+cpuset +cpu +io +memory +pids", "harvest.slice/cgroup.subtree_control": "+cpuset +cpu +io +memory +pids",
		"harvest.slice/cpu.weight": "1", "harvest.slice/cpu.idle": "1", "harvest.slice/cpu.max": "max 100000",
		"harvest.slice/io.weight": "default 1",
	} {
		if got := read(t, root, f); got != want {
			t.Errorf("%s = %q, want %q", f, got, want)
		}
	}
	if _, err := p.SetCap(0.75); err != nil || read(t, root, "harvest.slice/cpu.max") != "75000 100000" {
		t.Errorf("cpu.max %q %v", read(t, root, "harvest.slice/cpu.max"), err)
	}
	if _, err := p.SetCap(-1); err != nil || read(t, root, "harvest.slice/cpu.max") != "max 100000" {
		t.Errorf("uncapped cpu.max %q %v", read(t, root, "harvest.slice/cpu.max"), err)
	}
	dir, err := p.TaskCgroupV2("alloc.task")
	if err != nil || dir != filepath.Join(root, "harvest.slice", "alloc.task.scope") {
		t.Fatalf("task cgroup %s %v", dir, err)
	}
	if err := p.Release("alloc.task"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("task cgroup left: %v", err)
	}
	st, err := p.Stats()
	if err != nil || st.CPUSeconds != 2.5 || st.ThrottledPeriods != 7 || st.ThrottledSeconds != 0.3 {
		t.Errorf("stats %+v %v", st, err)
	}
	if _, err := p.Adopt("x", procsOf("/dev/null"), 0); err == nil {
		t.Error("a v1 adoption on v2")
	}
}

func procsOf(path string) func() ([]int, error) {
	return func() ([]int, error) { return ReadPIDs(path) }
}

func TestOpenRefusesBadPathsAndHostsWithoutCPU(t *testing.T) {
	root := v1Tree(t, false)
	for _, bad := range []string{"", "/", "../x", "/a/../../b"} {
		if _, err := Open(Options{Root: root, Path: bad}); err == nil {
			t.Errorf("path %q accepted", bad)
		}
	}
	if _, err := Open(Options{Root: t.TempDir(), Path: "/harvest"}); err == nil {
		t.Error("a host without a cpu controller accepted")
	}
}

// On a real cgroup v1 host (this project's test machines), as root: a
// process adopted into a parent is in its cpu cgroup, the kernel takes the
// lowest shares, SCHED_IDLE and a quota, and everything is removed again.
func TestRealCgroupV1(t *testing.T) {
	if os.Geteuid() != 0 || Detect("/sys/fs/cgroup") != V1 {
		t.Skip("needs root on a cgroup v1 host")
	}
	path := "/harvest-unit-" + strconv.Itoa(os.Getpid())
	p, err := Open(Options{Root: "/sys/fs/cgroup", Path: path, Idle: true, Cap: CapQuota})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	cmd := startSleep(t)
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); _ = p.Release("task") }()
	pids := func() ([]int, error) { return []int{cmd.Process.Pid}, nil }
	if n, err := p.Adopt("task", pids, 512); err != nil || n != 1 {
		t.Fatalf("adopt: %d %v", n, err)
	}
	cg, _ := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/cgroup")
	if !strings.Contains(string(cg), ":cpu:"+path+"/task\n") {
		t.Fatalf("process cgroups:\n%s", cg)
	}
	if _, err := p.SetCap(0.3); err != nil || read(t, "/sys/fs/cgroup", "cpu"+path+"/cpu.cfs_quota_us") != "30000" {
		t.Fatalf("cap: %v", err)
	}
	if idle, _ := os.ReadFile("/sys/fs/cgroup/cpu" + path + "/cpu.idle"); len(idle) > 0 && strings.TrimSpace(string(idle)) != "1" {
		t.Fatalf("cpu.idle %q", idle)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if err := p.Release("task"); err != nil {
		t.Fatal(err)
	}
}

func startSleep(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("/bin/sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}
