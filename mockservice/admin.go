package mockservice

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Admin drives a running mock service's admin routes. The zero HTTP client
// means http.DefaultClient.
type Admin struct {
	BaseURL string
	Token   string
	HTTP    *http.Client
}

// Reset clears the service's counters, high-water marks and stored writes.
func (a Admin) Reset(ctx context.Context) error {
	return a.do(ctx, http.MethodPost, "/admin/reset", "")
}

// SetProfile switches the service's latency profile.
func (a Admin) SetProfile(ctx context.Context, profile string) error {
	body, _ := json.Marshal(map[string]string{"profile": profile})
	return a.do(ctx, http.MethodPut, "/admin/profile", string(body))
}

// Healthy reports whether GET /healthz answers 200.
func (a Admin) Healthy(ctx context.Context) error {
	return a.do(ctx, http.MethodGet, "/healthz", "")
}

func (a Admin) do(ctx context.Context, method, path, body string) error {
	req, err := http.NewRequestWithContext(ctx, method, a.BaseURL+path, strings.NewReader(body))
	if err != nil {
		return fmt.Errorf("mock admin %s: %w", path, err)
	}
	if a.Token != "" {
		req.Header.Set("Authorization", bearerPrefix+a.Token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	c := a.HTTP
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("mock admin %s: %w", path, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("mock admin %s: %s: %s", path, resp.Status, strings.TrimSpace(string(msg)))
	}
	return nil
}
