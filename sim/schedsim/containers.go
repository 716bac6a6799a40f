package schedsim

import "strconv"

// job is one DAG job in the system: a chain of stages of one-core tasks.
type job struct {
	seq     int64 // arrival order
	arrival float64
	spec    jobSpec
	typ     int // index into jobTypes, as the placer types it; -1 untyped
	stage   int
	pending []float64 // durations of the current stage's tasks with no container yet
	left    int       // the current stage's tasks not finished (pending or running)
	held    int       // containers the job holds
	idle    []*container
	classes []int    // Algorithm 1's classes; nil: any server
	ranges  [][2]int // the servers of those classes
	waiting bool
	wver    int
}

// container is a one-core container a job holds on a server.
type container struct {
	job    *job
	server int
	id     string // the task ID the driver's guard sees
	start  float64
	busy   bool
	task   float64   // duration of the task it runs
	began  float64   // when that task began
	ran    []float64 // tasks it finished (LostContainer: lost with it)
	gen    int       // bumped on every change: an event of an older gen is stale
	// released: the container is gone (ended, killed or idle too long)
	released bool
}

func newJob(seq int64, at float64, spec jobSpec) *job {
	stages := spec.stages[:0:0]
	for _, st := range spec.stages {
		if len(st) > 0 {
			stages = append(stages, st)
		}
	}
	spec.stages = stages
	return &job{seq: seq, arrival: at, spec: spec, typ: -1}
}

// releaseStage makes the current stage's tasks ready.
func (s *sim) releaseStage(j *job) {
	st := j.spec.stages[j.stage]
	j.pending = append(j.pending[:0], st...)
	j.left = len(st)
	s.dispatch(j)
}

// dispatch runs ready tasks in the job's idle containers, then asks for
// containers for the rest: servers with room now take them (a job behind
// others gets only room those cannot use: they would have taken it), and
// the job waits for the rest in arrival order.
func (s *sim) dispatch(j *job) {
	for len(j.pending) > 0 && len(j.idle) > 0 {
		c := j.idle[len(j.idle)-1]
		j.idle = j.idle[:len(j.idle)-1]
		s.run(c, s.popPending(j))
	}
	if len(j.pending) == 0 {
		j.waiting = false
	}
	if len(j.pending) == 0 || j.waiting {
		return
	}
	for len(j.pending) > 0 {
		i := s.pick(j.ranges)
		if i < 0 && j.ranges != nil && !s.cfg.ClassConstraint {
			i = s.pick(nil) // the classes are a preference: any server will do
		}
		if i < 0 {
			s.startWaiting(j)
			return
		}
		s.grant(j, i)
	}
}

func (s *sim) popPending(j *job) float64 {
	d := j.pending[len(j.pending)-1]
	j.pending = j.pending[:len(j.pending)-1]
	return d
}

// grant starts a new container for j on server i with its next ready task.
func (s *sim) grant(j *job, i int) {
	s.nextID++
	c := &container{job: j, server: i, id: strconv.FormatInt(s.nextID, 10), start: s.now}
	sv := &s.servers[i]
	sv.held = append(sv.held, c)
	j.held++
	s.refresh(i)
	s.run(c, s.popPending(j))
	if len(j.pending) == 0 {
		j.waiting = false
	}
}

// run starts a task in a container.
func (s *sim) run(c *container, d float64) {
	c.busy, c.task, c.began = true, d, s.now
	c.gen++
	s.busy++
	s.events.Push(finish{at: s.now + d + s.cfg.StartDelay.Seconds(), c: c, gen: c.gen})
}

// taskDone: a container finished its task. With reuse it takes the job's
// next ready task, or the next stage's first, or waits IdleRelease for one
// (Tez's idle release timeout). Without reuse it goes at once.
func (s *sim) taskDone(c *container) {
	j := c.job
	c.busy = false
	s.busy--
	s.survival.observe(s, c, false)
	s.classResult(j.spec.class).TaskSecondsByPattern[s.patternOf(c.server)] += c.task
	if s.cfg.LostWork == LostContainer && s.cfg.ContainerReuse {
		c.ran = append(c.ran, c.task)
	}
	j.left--
	if s.cfg.ContainerReuse {
		c.gen++
		j.idle = append(j.idle, c)
	} else {
		s.release(c, true)
	}
	switch {
	case len(j.pending) > 0:
		s.dispatch(j)
	case j.left == 0 && j.stage+1 == len(j.spec.stages):
		s.jobDone(j)
	case j.left == 0:
		j.stage++
		if d := s.cfg.StageDelay.Seconds(); d > 0 {
			s.events.Push(finish{at: s.now + d, release: j})
		} else {
			s.releaseStage(j)
		}
	}
	if s.cfg.ContainerReuse && !c.busy && !c.released {
		// still idle: it waits IdleRelease for its job's next task (Tez's idle
		// release timeout); the event is pushed only now, as most containers
		// take a task at once
		s.events.Push(finish{at: s.now + s.cfg.IdleRelease.Seconds(), c: c, gen: c.gen, idle: true})
	}
}

// idleExpired releases a container that stayed idle for IdleRelease.
func (s *sim) idleExpired(c *container) {
	j := c.job
	for k, h := range j.idle {
		if h == c {
			j.idle = append(j.idle[:k], j.idle[k+1:]...)
			break
		}
	}
	s.release(c, true)
}

// release gives a container's core back; offer hands it to waiting jobs.
func (s *sim) release(c *container, offer bool) {
	sv := &s.servers[c.server]
	for k, h := range sv.held {
		if h == c {
			sv.held[k] = sv.held[len(sv.held)-1]
			sv.held = sv.held[:len(sv.held)-1]
			break
		}
	}
	c.job.held--
	c.gen++
	c.released = true
	s.refresh(c.server)
	if offer {
		s.offer(c.server)
	}
}

// kill evicts a container: its running task, and with LostContainer every
// task it ran before (their output lived in it), go back to the job's
// current stage.
func (s *sim) kill(c *container) {
	j := c.job
	var wasted float64
	if c.busy {
		left := c.task
		if s.cfg.LostWork == LostNothing {
			left = max(0, c.task-(s.now-c.began))
		} else {
			wasted += s.now - c.began
		}
		s.survival.observe(s, c, true)
		j.pending = append(j.pending, left)
		c.busy = false
		s.busy--
	} else {
		for k, h := range j.idle {
			if h == c {
				j.idle = append(j.idle[:k], j.idle[k+1:]...)
				break
			}
		}
	}
	for _, d := range c.ran {
		wasted += d
		j.pending = append(j.pending, d)
		j.left++
	}
	c.ran = nil
	s.release(c, false) // the server is short of its reserve: nothing to offer
	s.res.Evicted++
	s.res.WastedTaskSeconds += wasted
	byClass := s.classResult(j.spec.class)
	byClass.Evicted++
	byClass.WastedTaskSeconds += wasted
	s.res.EvictedByPattern[s.patternOf(c.server)]++
	s.dispatch(j)
}

// jobDone records a finished job; nothing of it is kept but its time.
func (s *sim) jobDone(j *job) {
	for len(j.idle) > 0 {
		c := j.idle[len(j.idle)-1]
		j.idle = j.idle[:len(j.idle)-1]
		s.release(c, true)
	}
	j.stage = len(j.spec.stages)
	j.spec.stages, j.pending = nil, nil // a month of a large datacenter must fit in memory
	took := s.now - j.arrival
	s.times = append(s.times, took)
	c := s.classResult(j.spec.class)
	c.Jobs++
	c.MeanJobSeconds += took // summed here, divided in finishResult
}
