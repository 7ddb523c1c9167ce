package classify

// countLost counts the missing ids (in expected order) and the lost inputs
// into res, and reports whether the last delivered copy of some expected id
// reflects fewer source tuples than expected.
func (s *state) countLost(res *Result) (short bool) {
	for d := range int32(s.nExpIDs) {
		if s.lastObs[d] < 0 {
			res.Missing++
			res.MissingIDs = append(res.MissingIDs, s.expOut(int(s.expHead[d])).ID)
			if n, ok := s.expN(d); ok {
				res.LostInputs += n
			}
			continue
		}
		if sf := s.shortfall(d); sf > 0 {
			res.LostInputs += sf
			short = true
		}
	}
	return short
}

// shortfall is expected n − n of the last delivered copy of id d when both
// are known and positive, else 0 (also 0 for an id never delivered).
func (s *state) shortfall(d int32) int64 {
	if int(d) >= s.nExpIDs {
		return 0
	}
	last := s.lastObs[d]
	// An ok delivery of an id expected once matched it, n included.
	if last < 0 || s.status[last] == StatusOK && s.single(d) {
		return 0
	}
	o := s.obsItem(last)
	if !o.hasN {
		return 0
	}
	if n, ok := s.expN(d); ok && o.n < n {
		return n - o.n
	}
	return 0
}

// keyEqual reports whether the de-duplicated observed sequence of key k
// equals its expected sequence.
func (s *state) keyEqual(k int) bool {
	e, o := s.expByKey[k], s.dedByKey[k]
	if len(e) != len(o) {
		return false
	}
	for i := range e {
		if !s.sameEO(e[i], o[i]) {
			return false
		}
	}
	return true
}

// commonSuffix is the length of the longest common suffix of the expected
// and de-duplicated observed sequences of key k.
func (s *state) commonSuffix(k int) int {
	e, o := s.expByKey[k], s.dedByKey[k]
	n := 0
	for n < len(e) && n < len(o) && s.sameEO(e[len(e)-1-n], o[len(o)-1-n]) {
		n++
	}
	return n
}

// convergence reports whether every key converges, and where: the latest
// first delivery of the converged suffixes, as a time in ms when all of
// them carry a time, else as an observed index.
func (s *state) convergence() (float64, bool) {
	if s.nKeys == 0 {
		return 0, false
	}
	maxT, maxIdx, allT := 0.0, int32(-1), true
	for k := range s.nKeys {
		n := s.commonSuffix(k)
		if n == 0 {
			return 0, false
		}
		o := s.dedByKey[k]
		start := o[len(o)-n]
		maxIdx = max(maxIdx, start)
		if ob := s.obsItem(start); !ob.hasT {
			allT = false
		} else if k == 0 || ob.t > maxT {
			maxT = ob.t
		}
	}
	if allT {
		return maxT, true
	}
	return float64(maxIdx), true
}
