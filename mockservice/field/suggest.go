package field

import "math"

// Closest is the name nearest to s by edit distance, when it is near
// enough to be a typo (at most a third of its letters, at least 1 and at
// most 2 edits); else "". For "did you mean" in errors about names.
func Closest(s string, names []string) string {
	best, bestD := "", math.MaxInt
	for _, n := range names {
		if d := distance(s, n); d < bestD {
			best, bestD = n, d
		}
	}
	if bestD <= max(1, min(2, len(s)/3)) {
		return best
	}
	return ""
}

// distance is the Levenshtein distance of a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
