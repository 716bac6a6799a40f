package schedsim

import (
	"strings"
	"testing"
)

func TestParseSWIM(t *testing.T) {
	in := "job0\t49\t49\t134217728\t1\t0\njob1\t101\t52\t1000\t0\t5\n"
	jobs, err := ParseSWIM(strings.NewReader(in), 30)
	if err != nil {
		t.Fatal(err)
	}
	// 128 MiB in: 2 maps; 1 byte shuffled: 1 reduce; the second job maps only
	if len(jobs) != 2 || len(jobs[0].Stages) != 2 || len(jobs[0].Stages[0]) != 2 || len(jobs[0].Stages[1]) != 1 ||
		len(jobs[1].Stages) != 1 || jobs[1].Stages[0][0] != 30 {
		t.Fatalf("jobs %+v", jobs)
	}
	for _, bad := range []string{"job0\t1\t1\t-5\t0\t0\n", "job0\t1\t1\n", "", "job0 1 1 x 0 0\n"} {
		if _, err := ParseSWIM(strings.NewReader(bad), 30); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestParseAlibaba(t *testing.T) {
	in := "create,end,job,task,instances,status,cpu,mem\n" +
		"100,160,7,2,3,Terminated,50,0.1\n" + // second stage: created later
		"10,40,7,1,2,Terminated,50,0.1\n" +
		"5,5,8,1,4,Waiting,,\n" + // never ran
		"0,20000,9,1,9999,Terminated,50,0.1\n"
	jobs, err := ParseAlibaba(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 {
		t.Fatalf("%d jobs, want 2 (job 8 never ran)", len(jobs))
	}
	j := jobs[0]
	if len(j.Stages) != 2 || len(j.Stages[0]) != 2 || j.Stages[0][0] != 30 || len(j.Stages[1]) != 3 || j.Stages[1][0] != 60 {
		t.Fatalf("job 7: %+v", j)
	}
	if len(jobs[1].Stages[0]) != MaxStageTasks {
		t.Fatalf("job 9's stage has %d tasks, want the cap %d", len(jobs[1].Stages[0]), MaxStageTasks)
	}
	// read as ParseAlibabaTasks reads: all 8 fields, requests checked
	for _, bad := range []string{"1,2,3\n", "a,b,c,d,e\n1,x,3,4,5\n", "create,end\n", "1,2,3,4,5\n", "1,2,3,4,5,S,1,-1\n"} {
		if _, err := ParseAlibaba(strings.NewReader(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func FuzzParseSWIM(f *testing.F) {
	f.Add("job0\t49\t49\t740773\t2339561\t627471\n")
	f.Fuzz(func(t *testing.T, in string) {
		jobs, err := ParseSWIM(strings.NewReader(in), 30)
		if err == nil && len(jobs) == 0 {
			t.Fatal("no error and no jobs")
		}
		for _, j := range jobs {
			for _, st := range j.Stages {
				if len(st) == 0 || len(st) > MaxStageTasks {
					t.Fatalf("stage of %d tasks", len(st))
				}
			}
		}
	})
}

func FuzzParseAlibaba(f *testing.F) {
	f.Add("create,end,job,task,instances,status,cpu,mem\n6459,6524,3,4,15740,Terminated,50,0.007\n")
	f.Fuzz(func(t *testing.T, in string) {
		jobs, err := ParseAlibaba(strings.NewReader(in))
		if err == nil && len(jobs) == 0 {
			t.Fatal("no error and no jobs")
		}
		for _, j := range jobs {
			for _, st := range j.Stages {
				if len(st) == 0 || len(st) > MaxStageTasks || st[0] < 1 {
					t.Fatalf("stage %v", st)
				}
			}
		}
	})
}

func TestParseAlibabaTasks(t *testing.T) {
	in := "create,end,job,task,instances,status,cpu,mem\n" +
		"100,160,7,2,3,Terminated,50,0.1\n" +
		"5,5,8,1,4,Waiting,,\n" + // never ran
		"-20,40,9,1,2,Failed,,\n" // ran, but the trace has no requests
	tasks, err := ParseAlibabaTasks(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []AlibabaTask{{Create: 100, End: 160, Job: "7", Task: "2", Instances: 3, Status: "Terminated", CPU: 50, Mem: 0.1},
		{Create: -20, End: 40, Job: "9", Task: "1", Instances: 2, Status: "Failed"}}
	if len(tasks) != len(want) || tasks[0] != want[0] || tasks[1] != want[1] {
		t.Fatalf("tasks %+v, want %+v", tasks, want)
	}
	for _, bad := range []string{"1,2,3,4,5,S,1\n", "1,x,3,4,5,S,1,1\n", "1,2,3,4,5,S,1,-1\n", "create,end\n", "5,5,8,1,4,Waiting,,\n"} {
		if _, err := ParseAlibabaTasks(strings.NewReader(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func FuzzParseAlibabaTasks(f *testing.F) {
	f.Add("create,end,job,task,instances,status,cpu,mem\n6459,6524,3,4,15740,Terminated,50,0.007\n6036,6046,4,7,393,Waiting,,\n")
	f.Fuzz(func(t *testing.T, in string) {
		tasks, err := ParseAlibabaTasks(strings.NewReader(in))
		if err == nil && len(tasks) == 0 {
			t.Fatal("no error and no tasks")
		}
		for _, k := range tasks {
			if !(k.End > k.Create) || k.Instances < 1 || k.CPU < 0 || k.Mem < 0 || !finite(k.CPU) || !finite(k.Mem) {
				t.Fatalf("task %+v", k)
			}
		}
	})
}
