package report

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/loadlab/loadlab/experiments/exptest"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// pageWidths is what the browser measured of a page, in CSS px.
type pageWidths struct {
	ScrollWidth, InnerWidth, Widest float64
	What                            string
}

// Every committed result's report.html, drawn by the current code, fits a
// 1,366 px wide window: nothing makes the page scroll sideways, and no
// table, chart or figure reaches past the window's right edge.
func TestReportFitsALaptopScreen(t *testing.T) {
	browser := exptest.Chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.WindowSize(1366, 900),
		chromedp.NoSandbox, chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	for _, name := range []string{"replication-v4", "conditions-v1", "adaptive-v2", "container-v3"} {
		res, err := resultsfile.ReadResults(filepath.Join("..", "results", name, "results.json"))
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(filepath.Join(dir, name+".html"))
		if err != nil {
			t.Fatal(err)
		}
		err = WriteHTML(f, res)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		const measure = `(() => {
			let widest = 0, what = "";
			for (const e of document.querySelectorAll("table, figure, svg, p, pre, h1, h2")) {
				const r = e.getBoundingClientRect().right;
				if (r > widest) { widest = r; what = e.tagName + ": " + e.textContent.slice(0, 60); }
			}
			return {ScrollWidth: document.documentElement.scrollWidth, InnerWidth: window.innerWidth, Widest: widest, What: what};
		})()`
		if _, err := chromedp.Run(ctx, chromedp.Navigate("file://"+filepath.Join(dir, name+".html"))); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		page, err := chromedp.Run(ctx, chromedp.Evaluate[pageWidths](measure))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if page.InnerWidth != 1366 || page.ScrollWidth > page.InnerWidth || page.Widest > page.InnerWidth {
			t.Errorf("%s at %g px: the page is %g px wide; its widest element ends at %g px (%s)", name, page.InnerWidth, page.ScrollWidth, page.Widest, page.What)
		}
		t.Logf("%s: page %g px, widest element ends at %g px, in a %g px window", name, page.ScrollWidth, page.Widest, page.InnerWidth)
	}
}
