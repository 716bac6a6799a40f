package schedsim

// fenwick is a Fenwick (binary indexed) tree of non-negative integer
// weights: set one weight, sum a prefix, or find the index a cumulative
// weight falls in, each in O(log n). The scheduler keeps every server's
// free containers in one, so drawing a server with probability
// proportional to its room costs a logarithm, not a scan of the cluster.
type fenwick struct {
	tree []int64 // 1-based
	w    []int64
	top  int // highest power of two <= n
}

func newFenwick(n int) *fenwick {
	top := 1
	for top*2 <= n {
		top *= 2
	}
	return &fenwick{tree: make([]int64, n+1), w: make([]int64, n), top: top}
}

// set makes index i weigh w.
func (f *fenwick) set(i int, w int64) {
	d := w - f.w[i]
	if d == 0 {
		return
	}
	f.w[i] = w
	for k := i + 1; k < len(f.tree); k += k & -k {
		f.tree[k] += d
	}
}

// prefix is the total weight of indexes [0, i).
func (f *fenwick) prefix(i int) int64 {
	var s int64
	for k := i; k > 0; k -= k & -k {
		s += f.tree[k]
	}
	return s
}

// sum is the total weight of indexes [lo, hi).
func (f *fenwick) sum(lo, hi int) int64 { return f.prefix(hi) - f.prefix(lo) }

// find returns the index whose weight holds cumulative position u
// (0 <= u < total): the smallest i with prefix(i+1) > u.
func (f *fenwick) find(u int64) int {
	pos := 0
	for step := f.top; step > 0; step /= 2 {
		if next := pos + step; next < len(f.tree) && f.tree[next] <= u {
			pos = next
			u -= f.tree[next]
		}
	}
	return pos
}
