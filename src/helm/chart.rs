//! A chart and its rendering, as `helm template` does it: `Chart.yaml` as `.Chart`, `values.yaml` under the
//! user's values, every file under `templates/` parsed into one set, each that is not a partial (`_*`) nor
//! `NOTES.txt` executed with `.Values`, `.Release`, `.Chart`, `.Capabilities`, `.Template` and `.Files`, the
//! output split into YAML documents and put in Helm's install order. The files under `crds/` are not templates:
//! they are returned as they are.
//!
//! Subcharts are refused: Karpenter's chart has none, and rendering them right means Helm's whole dependency
//! model (conditions, import-values, global values).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Component, Path};

use serde_json::Value as Json;

use super::exec::TemplateSet;
use super::goyaml;
use super::value::{Map, Struct, Value};

use super::values;
use super::TemplateError;

/// The Helm release whose `helm template` kbp renders as (`.Capabilities.HelmVersion`).
pub const HELM_VERSION: &str = "v4.3.2";

/// A chart file larger than this, decompressed, is not something kbp should read.
const MAX_FILE_BYTES: u64 = 16 << 20;

/// Why a chart could not be read or rendered.
#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    /// A chart file or directory could not be read, or the archive is not a readable `.tgz`.
    #[error("cannot read the chart at {place}: {reason}")]
    Unreadable {
        /// The chart directory or archive.
        place: String,
        /// The I/O or archive error.
        reason: String,
    },
    /// The directory or archive holds no `Chart.yaml`, so it is not a chart.
    #[error("the chart has no Chart.yaml")]
    NoChartYaml,
    /// A chart file, or a template's output, is not valid YAML.
    #[error("{file} is not valid YAML: {error}")]
    Yaml {
        /// The file, or `<chart>/templates/<file>` for rendered output.
        file: String,
        /// The YAML parser's error.
        error: goyaml::YamlError,
    },
    /// The chart has dependencies under `charts/`, which kbp does not render.
    #[error("the chart {name} has subcharts (charts/{sub}); kbp renders charts without dependencies")]
    Subcharts {
        /// The chart's name.
        name: String,
        /// The first subchart found.
        sub: String,
    },
    /// A template failed to parse or to execute.
    #[error(transparent)]
    Template(#[from] TemplateError),
}

/// A chart's files, read from a directory or a `.tgz` archive.
#[derive(Debug, Clone)]
pub struct Chart {
    /// `Chart.yaml`.
    pub metadata: Json,
    /// `values.yaml` (an empty map when the chart has none).
    pub values: Json,
    /// `values.schema.json`, when the chart ships one.
    pub schema: Option<Json>,
    /// Every file by its path inside the chart (`templates/deployment.yaml`, `crds/…`), text only.
    pub files: BTreeMap<String, String>,
}

/// The release a chart is rendered for (`.Release`).
#[derive(Debug, Clone)]
pub struct Release {
    /// Release name (`.Release.Name`), which charts put in object names and labels.
    pub name: String,
    /// Namespace the release installs into (`.Release.Namespace`).
    pub namespace: String,
    /// `.Release.Service`, which charts write into `app.kubernetes.io/managed-by`: `Helm` under Helm.
    pub service: String,
}

/// What the chart may ask of the cluster (`.Capabilities`).
#[derive(Debug, Clone)]
pub struct Capabilities {
    /// `1.33` or `1.33.4`; `.Capabilities.KubeVersion.Version` prints as `v1.33.4`.
    pub kube_version: String,
    /// Extra API versions (`group/version`) beyond Kubernetes' own, as `helm template --api-versions`.
    pub api_versions: Vec<String>,
}

/// One object the chart renders, with the template it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    /// The template that rendered it, as Helm names it: `<chart>/templates/<file>`.
    pub source: String,
    /// The object, parsed from the template's YAML output.
    pub object: Json,
}

/// The result of rendering: the objects in install order, and Helm's warnings about the values.
#[derive(Debug, Clone)]
pub struct Output {
    /// The rendered objects, in Helm's install order by kind (PriorityClasses and Namespaces first).
    pub objects: Vec<Rendered>,
    /// Helm's warnings from coalescing the values (a user's table where the chart has a non-table, or the reverse).
    pub warnings: Vec<String>,
    /// The values the templates saw (the chart's defaults under the user's).
    pub values: Json,
}

impl Chart {
    /// The chart's name from `Chart.yaml` (`chart` when it has none).
    pub fn name(&self) -> &str {
        self.metadata.get("name").and_then(Json::as_str).unwrap_or("chart")
    }

    /// The chart's version from `Chart.yaml` (empty when it has none).
    pub fn version(&self) -> &str {
        self.metadata.get("version").and_then(Json::as_str).unwrap_or("")
    }

    /// The chart's `appVersion` from `Chart.yaml`, the application release it packages.
    pub fn app_version(&self) -> Option<&str> {
        self.metadata.get("appVersion").and_then(Json::as_str)
    }

    /// A chart directory (the one holding `Chart.yaml`).
    pub fn from_dir(dir: &Path) -> Result<Chart, ChartError> {
        let unreadable = |reason: String| ChartError::Unreadable { place: dir.display().to_string(), reason };
        let mut files = BTreeMap::new();
        let mut pending = vec![dir.to_path_buf()];
        while let Some(current) = pending.pop() {
            let entries = std::fs::read_dir(&current).map_err(|e| unreadable(e.to_string()))?;
            for entry in entries {
                let entry = entry.map_err(|e| unreadable(e.to_string()))?;
                let path = entry.path();
                let kind = entry.file_type().map_err(|e| unreadable(e.to_string()))?;
                if kind.is_dir() {
                    pending.push(path);
                } else if kind.is_file() {
                    let relative = path.strip_prefix(dir).unwrap_or(&path);
                    let name =
                        relative.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/");
                    let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
                    if size > MAX_FILE_BYTES {
                        continue;
                    }
                    if let Ok(text) = std::fs::read_to_string(&path) {
                        files.insert(name, text);
                    }
                }
            }
        }
        Chart::from_files(files)
    }

    /// A packaged chart (`helm package`, or the layer an OCI registry serves): a gzipped tar whose top-level
    /// directory is the chart's.
    pub fn from_archive(tgz: &[u8]) -> Result<Chart, ChartError> {
        let files = archive_files(tgz, MAX_FILE_BYTES)
            .map_err(|e| ChartError::Unreadable { place: "the chart archive".into(), reason: e.to_string() })?;
        // Below the chart's directory; a file that is not UTF-8 text is no template, values or CRD file.
        let texts = files.into_iter().filter(|(parts, _)| parts.len() >= 2);
        let texts = texts.filter_map(|(parts, bytes)| Some((parts[1..].join("/"), String::from_utf8(bytes).ok()?)));
        Chart::from_files(texts.collect())
    }

    /// A chart from its files by path inside it (`Chart.yaml`, `templates/…`).
    pub fn from_files(files: BTreeMap<String, String>) -> Result<Chart, ChartError> {
        let yaml = |file: &str, text: &str| {
            goyaml::document(text).map_err(|error| ChartError::Yaml { file: file.into(), error })
        };
        let metadata = yaml("Chart.yaml", files.get("Chart.yaml").ok_or(ChartError::NoChartYaml)?)?;
        let values = match files.get("values.yaml") {
            Some(text) => match yaml("values.yaml", text)? {
                Json::Null => Json::Object(Default::default()),
                v => v,
            },
            None => Json::Object(Default::default()),
        };
        let schema = files.get("values.schema.json").and_then(|t| serde_json::from_str(t).ok());
        let chart = Chart { metadata, values, schema, files };
        if let Some(sub) = chart.files.keys().find_map(|k| k.strip_prefix("charts/")) {
            return Err(ChartError::Subcharts {
                name: chart.name().into(),
                sub: sub.split('/').next().unwrap_or(sub).into(),
            });
        }
        Ok(chart)
    }

    /// The chart's CRD files (`crds/*.yaml`), by path.
    pub fn crd_files(&self) -> impl Iterator<Item = (&str, &str)> {
        self.files
            .iter()
            .filter(|(k, _)| {
                k.starts_with("crds/") && (k.ends_with(".yaml") || k.ends_with(".yml") || k.ends_with(".json"))
            })
            .map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// `helm template`: the chart rendered with `user` values (already merged from files and inline values).
    pub fn render(&self, user: &Json, release: &Release, capabilities: &Capabilities) -> Result<Output, ChartError> {
        let (values, warnings) = values::coalesce(&self.values, user);
        let name = self.name().to_string();
        let mut set = TemplateSet::default();
        let templates: Vec<(&String, &String)> =
            self.files.iter().filter(|(k, _)| k.starts_with("templates/")).collect();
        for (path, text) in &templates {
            set.add(&format!("{name}/{path}"), text)?;
        }
        let top = self.top_level(&values, release, capabilities);
        let mut objects = Vec::new();
        for (path, _) in &templates {
            let base = path.rsplit('/').next().unwrap_or(path);
            if base.starts_with('_') || base == "NOTES.txt" {
                continue;
            }
            let source = format!("{name}/{path}");
            if let Value::Map(top) = &top {
                top.borrow_mut().insert("Template".into(), template_info(&source, &name));
            }
            let text = set.execute(&source, &top)?.replace("<no value>", "");
            for document in split_documents(&text) {
                let object =
                    goyaml::document(&document).map_err(|error| ChartError::Yaml { file: source.clone(), error })?;
                if object.is_null() {
                    continue;
                }
                objects.push(Rendered { source: source.clone(), object });
            }
        }
        objects.sort_by_key(|r| install_rank(r.object.get("kind").and_then(Json::as_str).unwrap_or("")));
        Ok(Output { objects, warnings, values })
    }

    fn top_level(&self, values: &Json, release: &Release, capabilities: &Capabilities) -> Value {
        let mut top = Map::new();
        top.insert("Values".into(), Value::from_json(values));
        top.insert("Chart".into(), chart_metadata(&self.metadata));
        top.insert("Release".into(), release_info(release));
        top.insert("Capabilities".into(), capabilities_info(capabilities));
        top.insert("Files".into(), files_info(&self.files));
        top.insert("Subcharts".into(), Value::map(Map::new()));
        Value::map(top)
    }
}

/// Helm's `SplitManifests`: documents separated by `---` lines, empty ones dropped.
fn split_documents(text: &str) -> Vec<String> {
    let mut documents = Vec::new();
    let mut current = String::new();
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end();
        if bare.starts_with("---") && bare[3..].trim().is_empty() {
            documents.push(std::mem::take(&mut current));
            continue;
        }
        current.push_str(line);
    }
    documents.push(current);
    documents.into_iter().filter(|d| !d.trim().is_empty()).collect()
}

/// Helm's `InstallOrder`: kinds others depend on first; kinds it does not list last.
fn install_rank(kind: &str) -> usize {
    const ORDER: &[&str] = &[
        "PriorityClass",
        "Namespace",
        "NetworkPolicy",
        "ResourceQuota",
        "LimitRange",
        "PodSecurityPolicy",
        "PodDisruptionBudget",
        "ServiceAccount",
        "Secret",
        "SecretList",
        "ConfigMap",
        "StorageClass",
        "PersistentVolume",
        "PersistentVolumeClaim",
        "CustomResourceDefinition",
        "ClusterRole",
        "ClusterRoleList",
        "ClusterRoleBinding",
        "ClusterRoleBindingList",
        "Role",
        "RoleList",
        "RoleBinding",
        "RoleBindingList",
        "Service",
        "DaemonSet",
        "Pod",
        "ReplicationController",
        "ReplicaSet",
        "Deployment",
        "HorizontalPodAutoscaler",
        "StatefulSet",
        "Job",
        "CronJob",
        "IngressClass",
        "Ingress",
        "APIService",
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
    ];
    ORDER.iter().position(|k| *k == kind).unwrap_or(ORDER.len())
}

fn chart_metadata(metadata: &Json) -> Value {
    // Chart.yaml's keys as Helm 4 hands them to templates: a map keyed by the Go struct's field names
    // (`appVersion` → `AppVersion`), every field present.
    const FIELDS: &[(&str, &str)] = &[
        ("name", "Name"),
        ("home", "Home"),
        ("sources", "Sources"),
        ("version", "Version"),
        ("description", "Description"),
        ("keywords", "Keywords"),
        ("maintainers", "Maintainers"),
        ("icon", "Icon"),
        ("apiVersion", "APIVersion"),
        ("condition", "Condition"),
        ("tags", "Tags"),
        ("appVersion", "AppVersion"),
        ("deprecated", "Deprecated"),
        ("annotations", "Annotations"),
        ("kubeVersion", "KubeVersion"),
        ("dependencies", "Dependencies"),
        ("type", "Type"),
    ];
    let mut fields = Map::new();
    for (key, field) in FIELDS {
        let value = metadata.get(*key).map(Value::from_json).unwrap_or_else(|| match *field {
            "Deprecated" => Value::Bool(false),
            "Sources" | "Keywords" | "Maintainers" | "Dependencies" => Value::list(Vec::new()),
            "Annotations" => Value::map(Map::new()),
            _ => Value::str(""),
        });
        fields.insert(field.to_string(), value);
    }
    fields.insert("IsRoot".into(), Value::Bool(true));
    Value::map(fields)
}

fn release_info(release: &Release) -> Value {
    let mut fields = Map::new();
    fields.insert("Name".into(), Value::str(&release.name));
    fields.insert("Namespace".into(), Value::str(&release.namespace));
    fields.insert("IsUpgrade".into(), Value::Bool(false));
    fields.insert("IsInstall".into(), Value::Bool(true));
    fields.insert("Revision".into(), Value::Int(1));
    fields.insert("Service".into(), Value::str(&release.service));
    Value::map(fields)
}

fn template_info(name: &str, chart: &str) -> Value {
    let mut fields = Map::new();
    fields.insert("Name".into(), Value::str(name));
    fields.insert("BasePath".into(), Value::str(format!("{chart}/templates")));
    Value::map(fields)
}

/// `major.minor[.patch]` of a Kubernetes version, without a leading `v`.
fn version_parts(version: &str) -> (String, String, String) {
    let bare = version.trim_start_matches('v');
    let core = bare.split(['-', '+']).next().unwrap_or(bare);
    let mut parts = core.split('.');
    let major = parts.next().unwrap_or("1").to_string();
    let minor = parts.next().unwrap_or("0").to_string();
    let patch = parts.next().unwrap_or("0").to_string();
    (major, minor, patch)
}

fn capabilities_info(capabilities: &Capabilities) -> Value {
    let (major, minor, patch) = version_parts(&capabilities.kube_version);
    let version = format!("v{major}.{minor}.{patch}");
    let mut kube = Map::new();
    kube.insert("Version".into(), Value::str(&version));
    kube.insert("GitVersion".into(), Value::str(&version));
    kube.insert("Major".into(), Value::str(&major));
    kube.insert("Minor".into(), Value::str(&minor));
    // Helm 4's KubeVersion has no String method: it prints as a Go struct.
    let shown = format!("{{{version} {version} {major} {minor}}}");
    let kube =
        Value::Struct(std::rc::Rc::new(Struct { type_name: "*common.KubeVersion", fields: kube, shown: Some(shown) }));

    let mut known: Vec<String> = super::api_versions::BUILTIN.iter().map(|v| v.to_string()).collect();
    known.extend(capabilities.api_versions.iter().cloned());
    // A VersionSet is a Go []string with a Has method: a list here, whose `Has` exec answers.
    let api = Value::list(known.into_iter().map(Value::str).collect());

    let mut helm = Map::new();
    helm.insert("Version".into(), Value::str(HELM_VERSION));
    helm.insert("GitCommit".into(), Value::str(""));
    helm.insert("GitTreeState".into(), Value::str(""));
    helm.insert("GoVersion".into(), Value::str(""));
    helm.insert("KubeClientVersion".into(), Value::str(""));
    let helm = Value::Struct(std::rc::Rc::new(Struct { type_name: "common.BuildInfo", fields: helm, shown: None }));

    let mut fields = Map::new();
    fields.insert("KubeVersion".into(), kube);
    fields.insert("APIVersions".into(), api);
    fields.insert("HelmVersion".into(), helm);
    Value::Struct(std::rc::Rc::new(Struct { type_name: "*common.Capabilities", fields, shown: None }))
}

/// `.Files`: `Get` and `Lines` of the chart's files outside `templates/`.
fn files_info(files: &BTreeMap<String, String>) -> Value {
    let readable: BTreeMap<String, String> =
        files.iter().filter(|(k, _)| !k.starts_with("templates/")).map(|(k, v)| (k.clone(), v.clone())).collect();
    let for_lines = readable.clone();
    let get = Value::method("Get", move |args| {
        let [Value::Str(name)] = args else { return Err("Get takes one file name".into()) };
        Ok(Value::str(readable.get(&**name).cloned().unwrap_or_default()))
    });
    let lines = Value::method("Lines", move |args| {
        let [Value::Str(name)] = args else { return Err("Lines takes one file name".into()) };
        let text = for_lines.get(&**name).cloned().unwrap_or_default();
        Ok(Value::list(text.lines().map(Value::str).collect()))
    });
    let mut fields = Map::new();
    fields.insert("Get".into(), get);
    fields.insert("Lines".into(), lines);
    Value::Struct(std::rc::Rc::new(Struct { type_name: "chart.Files", fields, shown: None }))
}

/// Every file of a gzipped tar (a packaged chart), as its path's parts (without `.`) and its first `max` bytes.
/// An entry whose path climbs out (`..`) or is absolute is left out.
pub fn archive_files(tgz: &[u8], max: u64) -> std::io::Result<Vec<(Vec<String>, Vec<u8>)>> {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(tgz));
    let mut files = Vec::new();
    for entry in archive.entries()? {
        let entry = entry?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let path = entry.path()?.into_owned();
        let parts: Option<Vec<String>> = path
            .components()
            .filter(|c| !matches!(c, Component::CurDir))
            .map(|c| match c {
                Component::Normal(p) => Some(p.to_string_lossy().into_owned()),
                _ => None,
            })
            .collect();
        let Some(parts) = parts else { continue };
        let mut bytes = Vec::new();
        entry.take(max).read_to_end(&mut bytes)?;
        files.push((parts, bytes));
    }
    Ok(files)
}
