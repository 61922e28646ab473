// The product speaks of the product: no words of its own development
// process (issue numbers and names, reviews, agents) and no paths outside
// the repository, in any tracked file a user reads or runs. Records that
// runs wrote (results.json, reports, locks) are kept as written.
package repocheck_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// processWords are the phrases refused, each with why, and a word every
// line it matches holds (lower-cased): lines without it are not matched
// against the expression, which under -race took most of the test's time.
var processWords = []struct {
	re   *regexp.Regexp
	why  string
	word string
}{
	{regexp.MustCompile(`(?i)\bissues? ?#?[0-9]+`), "an issue number", "issue"},
	{regexp.MustCompile(`(?i)\b(next|previous|this|that|earlier|later|layout|performance|rooms|front-door)[ -]issue\b`), "an issue named", "issue"},
	{regexp.MustCompile(`(?i)\b(from|in) the issue\b|\bthe issue's\b`), "an issue named", "issue"},
	{regexp.MustCompile(`(?i)\breview(s|ed|er|ers)?\b`), "a review", "review"},
	{regexp.MustCompile(`(?i)\bsub-?agents?\b`), "an agent", "agent"},
	{regexp.MustCompile(`\.\./shared|\bshared/seeds\b`), "a path outside the repository", "shared"},
	{regexp.MustCompile(`\bseeds/`), "a path outside the repository", "seeds"},
}

// recorded are files that runs wrote: evidence, kept byte for byte.
func recorded(path string) bool {
	switch filepath.Base(path) {
	case "results.json", "report.md", "report.html":
		return true
	}
	return strings.HasSuffix(path, ".lock")
}

func TestNoDevelopmentProcessWords(t *testing.T) {
	out, err := exec.Command("git", "ls-files").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	files := strings.Fields(string(out))
	if len(files) < 100 {
		t.Fatalf("git ls-files listed %d files", len(files))
	}
	for _, path := range files {
		if recorded(path) || path == "deploy/repocheck/words_test.go" {
			continue
		}
		f, err := os.Open(path)
		if err != nil {
			continue // deleted in the working tree
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for n := 1; sc.Scan(); n++ {
			lower := strings.ToLower(sc.Text())
			for _, w := range processWords {
				if !strings.Contains(lower, w.word) {
					continue
				}
				if m := w.re.FindString(sc.Text()); m != "" {
					t.Errorf("%s:%d: %q is %s: say what the product does, or leave it to the git log", path, n, m, w.why)
				}
			}
		}
		f.Close()
	}
}
