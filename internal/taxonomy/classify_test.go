package taxonomy_test

import (
	"testing"

	"github.com/evosignal/evosignal/internal/taxonomy"
	"github.com/evosignal/evosignal/internal/workshop/taxonomytest"
)

// The default taxonomy's patterns give each description its type, in
// English and Chinese (classified in Go by the rule the SQL applies).
func TestClassify(t *testing.T) {
	tests := []struct {
		description, want string
	}{
		{"Fix the parser bug", "coding"},
		{"Refactor the HTTP client", "coding"},
		{"Run the unit tests", "testing"},
		{"Run TestUpload five times", "testing"}, // word start: "test" in "TestUpload"
		{"Read the latest release", "filesystem"},
		{"Find every use of log_level", "search"},
		{"Search the web for the pricing pages", "search"},
		{"Write the README", "docs"},
		{"Summarize each issue in one line", "analysis"},
		{"Remember the user's preferences", "memory"},
		{"Plan the database migration", "planning"},
		{"Check which credentials are in use", "security"},
		{"Deploy the service to staging", "execution"},
		{"Convert notes.pdf", "filesystem"},
		{"Say hello", "general"},
		{"latest news", "general"}, // "test" inside a word does not match
		{"修复登录接口的错误", "coding"},
		{"运行单元测试", "testing"},
		{"搜索相关资料", "search"},
		{"更新项目文档", "docs"},
		{"分析错误日志", "analysis"},
		{"记住用户的偏好", "memory"},
		{"制定下周计划", "planning"},
		{"检查安全漏洞", "security"},
		{"部署服务", "execution"},
		{"读取配置文件", "filesystem"},
		{"你好", "general"},
	}
	classify := taxonomytest.Classifier(taxonomy.Default())
	for _, tt := range tests {
		t.Run(tt.description, func(t *testing.T) {
			if got := classify(tt.description); got != tt.want {
				t.Fatalf("classify(%q) = %q, want %q", tt.description, got, tt.want)
			}
		})
	}
}
