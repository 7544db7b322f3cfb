package mcpadapter

// DefaultListPageSize is how many tools, prompts or resources one list answer holds
// unless configured. Measured with two large imported descriptions, Stripe's and
// GitHub's REST API (1,675 tools), as the portable schema profile lists them: the
// heaviest run of 150 consecutive tools in list order stays under three quarters of
// 1 MB (TestListPagesFit; 100 take 543 KB, 200 take 851 KB), so every page stays
// under 1 MB (the largest, 643 KB). A tenant of every built-in provider (125 tools and
// the hub's own) still fits in one page.
const DefaultListPageSize = 150

// DefaultToolBudget is the most tools on connections a tenant URL lists by default before it
// serves them through search instead: past it, a list no longer fits what models take
// in and choose from well.
const DefaultToolBudget = 128
