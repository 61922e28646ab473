// Package split reads "i/n", part i of n, numbered from 0 like a
// Kubernetes Indexed Job's JOB_COMPLETION_INDEX: the experiment's shards
// and the load's segments.
package split

import (
	"fmt"
	"strconv"
	"strings"
)

// Max bounds a split: more parts than that would leave most of them empty
// for anything one machine can run.
const Max = 1000

// Parse reads s as "i/n", 0 ≤ i < n ≤ Max; noun names a part in errors
// ("shard", "segment").
func Parse(s, noun string) (index, count int, err error) {
	i, n, ok := strings.Cut(s, "/")
	if !ok {
		return 0, 0, fmt.Errorf("%q is not i/n (%s i of n, from 0: 0/2 and 1/2)", s, noun)
	}
	idx, err1 := strconv.Atoi(i)
	cnt, err2 := strconv.Atoi(n)
	switch {
	case err1 != nil || err2 != nil:
		return 0, 0, fmt.Errorf("%q is not i/n with whole numbers (%s i of n, from 0: 0/2 and 1/2)", s, noun)
	case cnt < 1 || cnt > Max:
		return 0, 0, fmt.Errorf("%q: the count %d must be in [1, %d]", s, cnt, Max)
	case idx < 0 || idx >= cnt:
		return 0, 0, fmt.Errorf("%q: the index %d must be in [0, %d) (%ss are numbered from 0, like JOB_COMPLETION_INDEX)", s, idx, cnt, noun)
	}
	return idx, cnt, nil
}
