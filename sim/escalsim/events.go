package escalsim

// events is a binary min-heap by time, then insertion-independent fields
// (kind, node, job, task) so that runs are deterministic.
type events []event

func (h events) less(a, b int) bool {
	x, y := h[a], h[b]
	switch {
	case x.t != y.t:
		return x.t < y.t
	case x.kind != y.kind:
		return x.kind < y.kind
	case x.job != y.job:
		return x.job < y.job
	case x.task != y.task:
		return x.task < y.task
	}
	return x.node < y.node
}

func (h *events) push(e event) {
	*h = append(*h, e)
	q := *h
	for i := len(q) - 1; i > 0; {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
}

func (h *events) pop() event {
	q := *h
	top := q[0]
	last := len(q) - 1
	q[0] = q[last]
	q = q[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(q) && q.less(l, m) {
			m = l
		}
		if r < len(q) && q.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
	*h = q
	return top
}
