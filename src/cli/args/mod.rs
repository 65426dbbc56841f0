//! Every command, flag and its help text. `kbp --help` and the CLI reference (docs/cli.md) come from here.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::state::Location;

mod state;
pub(crate) use state::{ForceUnlockArgs, StateCommand, StateQuery};

#[derive(Debug, Parser)]
#[command(
    name = "kbp",
    version,
    about = "Provision Karpenter-ready Amazon EKS clusters from one declarative blueprint",
    long_about = "kbp compiles a blueprint (TOML) into a graph of AWS and Kubernetes resources, compares it with \
                  what its state says exists (refreshed from AWS), and applies the difference concurrently in \
                  dependency order.\n\nAWS credentials and region come from the standard AWS chain (environment, \
                  profiles, SSO, instance metadata); AWS_ENDPOINT_URL points every call elsewhere.",
    after_help = "Exit codes: 0 success, 1 error, 2 changes present (plan --detailed-exitcode) or drift present \
                  (kbp drift, plan --refresh-only --detailed-exitcode)."
)]
/// The command line: options every command takes, and the command.
pub struct Cli {
    /// Options every command takes (`--no-color`, …).
    #[command(flatten)]
    pub global: Global,
    /// More log output on stderr (-v info, -vv debug); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Args)]
pub struct Global {
    /// Never colour the output (NO_COLOR is honoured too).
    #[arg(long, global = true)]
    pub no_color: bool,
    /// Run in DIR, as if started there (Terraform's -chdir): every relative path, blueprint and plan file
    /// included, is read from there.
    #[arg(short = 'C', long, global = true, value_name = "DIR")]
    pub chdir: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check a blueprint without touching AWS: every error, with file:line:column and a hint.
    ///
    /// The NodePools and EC2NodeClasses are rendered as apply would send them and checked by the Karpenter
    /// CRDs of the blueprint's release (their schema and every CEL rule), read offline from
    /// `karpenter.crds_dir` or kbp's cache (`kbp init` fills it); without them a warning says these checks
    /// did not run.
    Validate(ValidateArgs),
    /// Fetch the Karpenter chart of the blueprint's release into kbp's cache, for offline validation.
    ///
    /// Like `terraform init`: run once where the chart's registry is reachable (`KBP_CACHE_DIR` moves the
    /// cache). With `karpenter.crds_dir` set, checks that the directory's CRDs can be read instead.
    Init(InitArgs),
    /// Print the resource graph a blueprint compiles to.
    Graph(GraphArgs),
    /// What Karpenter would launch for a workload with the blueprint's NodePools, and what it costs.
    ///
    /// Offline apart from the region's instance-type catalog (DescribeInstanceTypes, DescribeInstanceTypeOfferings,
    /// DescribeSpotPriceHistory and the Price List API, cached a week under kbp's cache; `--refresh-catalog` reads
    /// it again, `--catalog FILE` uses a saved one). The workload is Kubernetes YAML (Deployments, StatefulSets,
    /// ReplicaSets, Jobs, Pods; DaemonSets count on every node) or `[[workload]]` tables in a .toml file. For each
    /// pod group it gives the NodePool chosen (weight, requirements, taints, limits, minValues) or each pool's
    /// reason for refusing it; per NodePool the nodes, instance types, capacity type and monthly cost. Exit 1 when
    /// a pod cannot be scheduled.
    Simulate(SimulateArgs),
    /// Rewrite blueprints in canonical form, keeping every comment (`--check` in CI).
    ///
    /// Rewrites each FILE that is not in canonical form (atomically, keeping its permissions) and prints its
    /// name. Only layout changes: tables, keys and values keep their order and spelling, and every comment is
    /// kept. The canonical form: `key = value`, everything at the left margin; one blank line between tables and
    /// none under a header; runs of blank lines made one; one space before an end-of-line comment; no trailing
    /// whitespace; an array on one line when it fits in 100 columns and holds no comment, else one item per
    /// line, indented two spaces, each with a comma; inline tables on one line; one final newline. Any valid
    /// TOML is formatted, blueprint or not; a file that is not valid TOML is reported (file:line:col) and left
    /// as it is.
    Fmt(FmtArgs),
    /// Print the blueprint's JSON Schema, for editors that complete and check TOML (taplo, Even Better TOML).
    ///
    /// The schema (JSON Schema draft 2020-12) is generated from the one kbp validates blueprints with: types,
    /// descriptions, defaults, enums, ranges, required fields, and unknown keys refused. Save it
    /// (`kbp schema --out kbp.schema.json`) and put `#:schema ./kbp.schema.json` on a blueprint's first line,
    /// or name it in a taplo config. `kbp validate` checks more than the schema can say: the string rules its
    /// descriptions name, and rules across fields.
    Schema(SchemaArgs),
    /// Show what apply would change, after refreshing state from AWS.
    Plan(PlanArgs),
    /// Report what changed outside kbp (for a scheduled CI job): exit 0 none, 2 drift, 1 error.
    ///
    /// The same as `kbp plan --refresh-only --detailed-exitcode`: refreshes state from AWS and the cluster and
    /// lists each resource changed or deleted outside kbp, attribute by attribute (`scaling.desired_size`,
    /// `state`, `manifest.spec.limits.cpu`: as state recorded it → as it is now). Changes nothing, state
    /// included. `--json` prints the report as the `drift` field of the plan event (see docs/json.md).
    /// `kbp apply --refresh-only` accepts the drift into state; `kbp apply` repairs it.
    Drift(StackArgs),
    /// Print a plan saved by `kbp plan --out` (text, Markdown or JSON), with the state it applies to.
    ///
    /// Reads only the file: for the approver of a CI apply job and its log (`kbp show kbp.plan` before `kbp
    /// apply kbp.plan`). `--json` prints the plan document, as the `plan` field of `kbp plan --json`'s plan
    /// event (see docs/json.md), without the inputs it carries for applying.
    Show(ShowArgs),
    /// Create or update the stack to match the blueprint (or apply a saved plan).
    Apply(ApplyArgs),
    /// Delete everything the stack's state holds.
    Destroy(DestroyArgs),
    /// Take an existing AWS resource under management at an address of the blueprint.
    ///
    /// Reads the resource by ID (`kbp graph --format json` lists the addresses; the error for a wrong ID says
    /// what ID the address's kind takes: `vpc-…`, a role name, `cluster:nodegroup`), writes it into state under
    /// the state lock, and prints what the next apply changes on it: kbp's tags to add and whatever differs from
    /// the blueprint. Refused, with state unchanged, for an address state already holds, an ID of nothing or of
    /// another kind, and a resource the next apply would replace. The blueprint's `[[import]]` tables do the same
    /// during plan and apply.
    Import(ImportArgs),
    /// Inspect state.
    #[command(subcommand)]
    State(StateCommand),
    /// Print the stack's outputs: cluster endpoint and CA, OIDC issuer, Karpenter's roles and queue.
    Output(OutputArgs),
    /// Print every Kubernetes manifest kbp applies in the cluster, validated, as YAML (like `helm template`).
    Render(RenderArgs),
    /// Write a kubeconfig context for the stack's cluster that authenticates with `kbp token`.
    Kubeconfig(KubeconfigArgs),
    /// Destroy expired sandbox stacks found by their tags (`kbp apply --ttl`).
    ///
    /// Finds the region's kbp stacks by their tags, no state files needed: one Resource Groups Tagging API query
    /// (`tag:GetResources`) for the VPCs and EKS clusters tagged `kbp:stack`, however many other clusters the
    /// region holds. Lists them with owner and expiry, and destroys the expired ones concurrently, each as
    /// completely as `kbp destroy --from-tags`. A stack without a TTL is never touched unless named with
    /// --stack. With --older-than, when each kbp cluster was created is read too (one DescribeCluster per stack)
    /// and shown in an AGE column.
    Gc(GcArgs),
    /// Remove the state lock a killed run left behind (remote state; the error of the blocked run shows the ID).
    ForceUnlock(ForceUnlockArgs),
    /// Print an ExecCredential with an EKS bearer token, for kubectl's exec plugin (like `aws eks get-token`).
    Token(TokenArgs),
    /// Print a shell completion script: `kbp completions bash > ~/.local/share/bash-completion/completions/kbp`.
    Completions(CompletionsArgs),
    /// Print kbp's manual page (roff, for `man -l -`), or write one page per command into a directory.
    Man(ManArgs),
}

impl Command {
    /// The command's name when its stdout is the `--json` event stream (see `crate::ui::json`).
    pub fn event_stream(&self) -> Option<&'static str> {
        match self {
            Command::Validate(a) if a.json => Some("validate"),
            Command::Plan(a) if a.stack.run.json || a.format == PlanFormat::Json => Some("plan"),
            Command::Drift(a) if a.run.json => Some("drift"),
            Command::Apply(a) if a.run.json => Some("apply"),
            Command::Destroy(a) if a.run.json => Some("destroy"),
            Command::Gc(a) if a.json => Some("gc"),
            Command::Simulate(a) if a.json => Some("simulate"),
            _ => None,
        }
    }
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct FmtArgs {
    /// The blueprint files (TOML) to format.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Write nothing: print the names of the files not in canonical form, and exit 1 if there are any.
    #[arg(long)]
    pub check: bool,
    /// Print a unified diff of each change on stdout instead of the file's name.
    #[arg(long)]
    pub diff: bool,
}

#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Write the schema to FILE instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write `kbp.1` and a `kbp-<command>.1` page per command into this directory instead of printing kbp.1.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Every manifest kbp would apply in the cluster: Karpenter's CRDs, the controller's objects, the EC2NodeClasses
/// and NodePools. Values only AWS knows (the cluster endpoint, its security group) come from state when the
/// stack exists, else show as "(known after apply)". Every object is validated first (custom objects against
/// the release's CRD schemas, the others against the Kubernetes API types); an invalid one fails the command
/// with its field paths.
#[derive(Debug, Args)]
pub struct RenderArgs {
    #[command(flatten)]
    pub bp: BlueprintArgs,
    /// State to take the AWS values from, a path or s3://BUCKET/KEY (default: the stack's state, if it exists).
    #[arg(long, value_name = "LOCATION", env = "KBP_STATE", value_parser = parse_location)]
    pub state: Option<Location>,
    /// Leave the CRDs out (no chart pull); the custom objects are then printed without schema validation.
    #[arg(long)]
    pub skip_crds: bool,
    /// Print instead the values kbp gives Karpenter's chart (its own merged with values_files and
    /// [karpenter.values]) as a Helm values file, headed by the `helm template` command that renders the same
    /// controller: the way to check kbp's render against Helm's.
    #[arg(long, conflicts_with = "skip_crds")]
    pub chart_values: bool,
}

/// Writes (or merges) a context for the stack's cluster into a kubeconfig file and makes it current. Its user
/// runs `kbp token` as the exec credential plugin. Reads the cluster from state; calls no AWS API.
#[derive(Debug, Args)]
pub struct KubeconfigArgs {
    #[command(flatten)]
    pub query: StateQuery,
    /// The kubeconfig file to write (default: the first path in KUBECONFIG, else ~/.kube/config).
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// The context name (default: the cluster's ARN, as `aws eks update-kubeconfig` names it).
    #[arg(long, value_name = "NAME")]
    pub alias: Option<String>,
}

#[derive(Debug, Args)]
pub struct TokenArgs {
    /// The EKS cluster's name.
    #[arg(long)]
    pub cluster: String,
    /// The cluster's region (default: the AWS configuration's region).
    #[arg(long)]
    pub region: Option<String>,
}

#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Print only this output (such as `cluster_endpoint`).
    pub name: Option<String>,
    /// With NAME: the bare value, no quotes or name (for `$(kbp output cluster_endpoint --raw)`).
    #[arg(long, requires = "name")]
    pub raw: bool,
    #[command(flatten)]
    pub query: StateQuery,
}

#[derive(Debug, Args, Clone)]
pub struct BlueprintArgs {
    /// The blueprint file (TOML).
    pub blueprint: PathBuf,
    #[command(flatten)]
    pub layers: Layers,
}

impl BlueprintArgs {
    /// The blueprint at `path` with these overlays and overrides.
    pub fn at(path: &std::path::Path, layers: &Layers) -> Self {
        BlueprintArgs { blueprint: path.to_path_buf(), layers: layers.clone() }
    }
}

/// What is laid over a blueprint file: overlay files, then `--set` overrides.
#[derive(Debug, Args, Clone, Default)]
pub struct Layers {
    /// A file laid over the blueprint (`kbp plan base.toml -f prod.toml`): its tables merge into the
    /// blueprint's key by key, its other values replace the blueprint's, later files win, and a problem is
    /// reported in the file that set the value. Repeatable.
    #[arg(short = 'f', long = "overlay", value_name = "FILE")]
    pub overlays: Vec<PathBuf>,
    /// Override a blueprint field: `--set cluster.name=sbx-42`, `--set vpc.nat_gateway=per-az`. Repeatable.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub sets: Vec<String>,
}

#[derive(Debug, Args, Clone)]
pub struct StateArgs {
    /// Where state lives: a file path, or s3://BUCKET/KEY[?region=R&kms_key_id=K&profile=P&role_arn=A] (default:
    /// the blueprint's [state] table, else `.kbp/<cluster-name>.state.json` beside the blueprint file).
    #[arg(long, value_name = "LOCATION", env = "KBP_STATE", value_parser = parse_location)]
    pub state: Option<Location>,
    /// How long to wait for another kbp run holding the state lock (`0s` fails at once).
    #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = parse_duration)]
    pub lock_timeout: Duration,
}

#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    /// How many resource operations may run at once.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub parallelism: u16,
    /// Machine-readable output: a JSON document (plan) or JSON lines (apply, destroy).
    #[arg(long)]
    pub json: bool,
    /// Reach the cluster's API server through this kubeconfig file instead of the endpoint and CA in state
    /// with an EKS token (for access through a proxy or another identity).
    #[arg(long, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use (default: its current context); implies --kubeconfig's default file
    /// when --kubeconfig is not given.
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
    /// Outside a terminal (a CI log), how often each operation still running gets a line (`still creating
    /// eks_cluster.main — 4m30s elapsed, typically 10 min [CREATING]`).
    #[arg(long, value_name = "DURATION", default_value = "30s", env = "KBP_PROGRESS_INTERVAL", value_parser = parse_duration)]
    pub progress_interval: Duration,
}

impl RunArgs {
    pub fn cluster_access(&self) -> crate::access::cluster::Access {
        use crate::access::cluster::Access;
        match (&self.kubeconfig, &self.context) {
            (None, None) => Access::Eks,
            (path, context) => Access::Kubeconfig { path: path.clone(), context: context.clone() },
        }
    }
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    #[command(flatten)]
    pub bp: BlueprintArgs,
    /// Report diagnostics as JSON.
    #[arg(long)]
    pub json: bool,
    /// Print the effective blueprint (every default filled in) when it is valid.
    #[arg(long)]
    pub print: bool,
}

#[derive(Debug, Args)]
pub struct SimulateArgs {
    #[command(flatten)]
    pub bp: BlueprintArgs,
    /// A workload file: Kubernetes YAML (many documents) or the compact .toml form. Repeatable.
    #[arg(long, short = 'w', value_name = "FILE", required = true)]
    pub workload: Vec<PathBuf>,
    /// Read the region's instance types and prices from AWS again, even when the cached catalog is fresh.
    #[arg(long)]
    pub refresh_catalog: bool,
    /// Use this catalog file (one kbp cached, `catalog/<region>.json`) instead of the cache or AWS.
    #[arg(long, value_name = "FILE", conflicts_with = "refresh_catalog")]
    pub catalog: Option<PathBuf>,
    /// Print the `simulation` event and the summary as JSON lines (see docs/json.md).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    #[command(flatten)]
    pub bp: BlueprintArgs,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum GraphFormat {
    Dot,
    Json,
}

#[derive(Debug, Args)]
pub struct GraphArgs {
    #[command(flatten)]
    pub bp: BlueprintArgs,
    #[arg(long, value_enum, default_value = "dot")]
    pub format: GraphFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlanFormat {
    /// Terraform-like text.
    Text,
    /// Event lines, the plan among them (the same as --json; see docs/json.md).
    Json,
    /// A summary and a collapsible diff for a pull-request comment.
    Markdown,
}

/// What the commands that refresh a blueprint's stack take: the blueprint, where its state is, how to run.
#[derive(Debug, Args)]
pub struct StackArgs {
    #[command(flatten)]
    pub bp: BlueprintArgs,
    #[command(flatten)]
    pub state: StateArgs,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Args)]
pub struct PlanArgs {
    #[command(flatten)]
    pub stack: StackArgs,
    /// How to print the plan on stdout (--json is --format json).
    #[arg(long, value_enum, default_value = "text")]
    pub format: PlanFormat,
    /// Save the plan; `kbp apply FILE` then applies exactly it.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Exit 0 when there are no changes, 2 when there are, 1 on error.
    #[arg(long)]
    pub detailed_exitcode: bool,
    /// Plan the destruction of the whole stack instead.
    #[arg(long)]
    pub destroy: bool,
    /// Show only what changed outside kbp since it last wrote state (drift), attribute by attribute; plan no
    /// change. With --detailed-exitcode: 2 when there is drift.
    #[arg(long, conflicts_with_all = ["destroy", "out"])]
    pub refresh_only: bool,
    #[command(flatten)]
    pub shaping: Shaping,
    /// Read the region's instance types and prices from AWS (and cache them) for the plan's cost block, instead
    /// of using only what kbp has cached (by `kbp simulate` or an earlier --refresh-catalog), whatever its age.
    #[arg(long, conflicts_with_all = ["destroy", "refresh_only"])]
    pub refresh_catalog: bool,
}

#[derive(Debug, Args)]
pub struct ApplyArgs {
    /// A blueprint file, or a plan saved by `kbp plan --out` (which takes no overlay or `--set`).
    pub file: PathBuf,
    #[command(flatten)]
    pub layers: Layers,
    #[command(flatten)]
    pub state: StateArgs,
    #[command(flatten)]
    pub run: RunArgs,
    /// Apply without asking for confirmation (required when stdin is not a terminal).
    #[arg(long)]
    pub auto_approve: bool,
    /// Make a sandbox: tag what is created with its owner (the caller's ARN) and an expiry this long from now,
    /// for `kbp gc` (overrides the blueprint's `cluster.ttl`).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub ttl: Option<Duration>,
    /// Accept what changed outside kbp into state (the refreshed attributes; resources deleted outside kbp
    /// leave state) and change nothing in AWS.
    #[arg(long, conflicts_with = "ttl")]
    pub refresh_only: bool,
    #[command(flatten)]
    pub shaping: Shaping,
}

/// What `plan` and `apply` take to narrow or force a plan, and how they read state.
#[derive(Debug, Args, Clone)]
pub struct Shaping {
    /// Plan only the resource at ADDRESS (as `kbp graph --format json` and `kbp plan` show it, such as
    /// `eks_node_group.controller`) and what it depends on; the stack's other changes wait for a later plan.
    /// Repeatable. For exceptions (a fix that cannot wait for the rest), not for routine use.
    #[arg(long = "target", value_name = "ADDRESS")]
    pub targets: Vec<String>,
    /// Replace the resource at ADDRESS (delete it and create it again, or the other way round where kbp
    /// replaces without downtime) although nothing of it changed. Repeatable.
    #[arg(long = "replace", value_name = "ADDRESS")]
    pub replace: Vec<String>,
    /// `--refresh=false`: take state as recorded, without asking AWS and the cluster what changed: faster, and
    /// blind to drift and to resources deleted outside kbp.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub refresh: bool,
    /// Plan even though no state was found and AWS holds resources tagged as this stack: rebuild the state from
    /// their tags (after a state file was lost). Without it such a plan is refused, so a run from a directory
    /// that does not see the stack's state never plans a second copy of it.
    #[arg(long)]
    pub adopt: bool,
    /// Plan a new stack even though a state beside it was made from the same blueprint under another
    /// `cluster.name` (the name was changed in the file). Without it such a plan is refused: EKS cannot rename
    /// a cluster, and the old stack would be left running with its state.
    #[arg(long)]
    pub new_stack: bool,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// A plan saved by `kbp plan --out`.
    pub file: PathBuf,
    /// How to print it (--json is --format json).
    #[arg(long, value_enum, default_value = "text")]
    pub format: PlanFormat,
    /// The plan document as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    #[command(flatten)]
    pub bp: BlueprintArgs,
    /// The address to import into, as `kbp graph` and `kbp plan` show it: `iam_role.cluster`, `eks_cluster.main`.
    pub address: String,
    /// The resource's ID in AWS, of the form its kind takes (a VPC ID, a role name, `cluster:nodegroup`).
    pub id: String,
    #[command(flatten)]
    pub state: StateArgs,
    /// Read the resource and print the plan, but write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print what was read and the change as one JSON document.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct DestroyArgs {
    /// The stack's blueprint (not with --from-tags).
    #[arg(required_unless_present = "from_tags", conflicts_with = "from_tags")]
    pub blueprint: Option<PathBuf>,
    #[command(flatten)]
    pub layers: Layers,
    /// Destroy the stack NAME found by its `kbp:stack` tags, without a state file (lost, or never here):
    /// everything tagged for it in the region, and what Karpenter made for its cluster.
    #[arg(long, value_name = "NAME")]
    pub from_tags: Option<String>,
    /// With --from-tags: only the stack of this ID (its `kbp:stack-id` tag, the state lineage), when two stacks of
    /// one name share the region.
    #[arg(long, value_name = "ID", requires = "from_tags")]
    pub stack_id: Option<String>,
    /// The region to look in with --from-tags (default: the AWS configuration's region).
    #[arg(long, value_name = "REGION", requires = "from_tags")]
    pub region: Option<String>,
    #[command(flatten)]
    pub state: StateArgs,
    #[command(flatten)]
    pub run: RunArgs,
    /// Destroy without asking for confirmation (required when stdin is not a terminal).
    #[arg(long)]
    pub auto_approve: bool,
    /// List everything that would be deleted, leftovers outside state included, and delete nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// `kbp gc`'s options; what the command does is said on [`Command::Gc`], which clap shows.
#[derive(Debug, Args)]
pub struct GcArgs {
    /// The region to look in (default: the AWS configuration's region).
    #[arg(long, value_name = "REGION")]
    pub region: Option<String>,
    /// Only list what would be destroyed.
    #[arg(long)]
    pub dry_run: bool,
    /// Only stacks whose EKS cluster was created at least this long ago (a stack without a cluster is kept).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub older_than: Option<Duration>,
    /// Also destroy this stack, expired or not, TTL or not. Repeatable.
    #[arg(long = "stack", value_name = "NAME")]
    pub stacks: Vec<String>,
    /// Destroy without asking for confirmation (required when stdin is not a terminal).
    #[arg(long)]
    pub auto_approve: bool,
    /// Machine-readable output: the stacks found and what was done, as JSON.
    #[arg(long)]
    pub json: bool,
}

fn parse_location(s: &str) -> Result<Location, String> {
    s.parse()
}

pub(super) fn parse_duration(s: &str) -> Result<Duration, String> {
    humantime::parse_duration(s).map_err(|e| format!("`{s}` is not a duration such as 30s, 5m or 1h: {e}"))
}

#[cfg(test)]
mod tests;
