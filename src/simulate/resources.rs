//! The four resources the simulation packs by: CPU (millicores), memory (bytes), GPUs and pod slots. A pod's
//! requests, a node's allocatable capacity and a NodePool's limits are all one [`Resources`].

use serde::Serialize;

use crate::kubernetes::quantity;

/// An amount of each resource the simulation counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Resources {
    /// CPU in millicores (1000 = one vCPU).
    pub cpu_milli: u64,
    /// Memory in bytes.
    pub memory: u64,
    /// GPUs and other accelerators, counted under any of [`GPU_RESOURCES`].
    pub gpu: u64,
    /// Pod slots.
    pub pods: u64,
}

/// The extended resource names a GPU is requested and limited by.
pub const GPU_RESOURCES: [&str; 3] = ["nvidia.com/gpu", "amd.com/gpu", "aws.amazon.com/neuron"];

impl Resources {
    /// The two added, resource by resource.
    pub fn plus(self, o: Resources) -> Resources {
        Resources {
            cpu_milli: self.cpu_milli + o.cpu_milli,
            memory: self.memory + o.memory,
            gpu: self.gpu + o.gpu,
            pods: self.pods + o.pods,
        }
    }

    /// `self - o`, each resource floored at zero.
    pub fn minus(self, o: Resources) -> Resources {
        Resources {
            cpu_milli: self.cpu_milli.saturating_sub(o.cpu_milli),
            memory: self.memory.saturating_sub(o.memory),
            gpu: self.gpu.saturating_sub(o.gpu),
            pods: self.pods.saturating_sub(o.pods),
        }
    }

    /// Each resource the larger of the two.
    pub fn max(self, o: Resources) -> Resources {
        Resources {
            cpu_milli: self.cpu_milli.max(o.cpu_milli),
            memory: self.memory.max(o.memory),
            gpu: self.gpu.max(o.gpu),
            pods: self.pods.max(o.pods),
        }
    }

    /// Whether every resource of `self` is at most that of `room`.
    pub fn fits(&self, room: &Resources) -> bool {
        self.cpu_milli <= room.cpu_milli && self.memory <= room.memory && self.gpu <= room.gpu && self.pods <= room.pods
    }

    /// The first resource of `self` above `room`'s, by name, for a reason such as "cpu".
    pub fn first_over(&self, room: &Resources) -> Option<&'static str> {
        [
            (self.cpu_milli > room.cpu_milli, "cpu"),
            (self.memory > room.memory, "memory"),
            (self.gpu > room.gpu, "gpu"),
            (self.pods > room.pods, "pods"),
        ]
        .into_iter()
        .find_map(|(over, name)| over.then_some(name))
    }

    /// Requests (or limits) as Kubernetes writes them, resource name → quantity. Names other than cpu, memory,
    /// `pods` and the GPU resources are not packed by and are skipped; a value that is not a quantity is an error
    /// naming the resource.
    pub fn from_quantities<'a>(entries: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Resources, String> {
        let mut r = Resources::default();
        for (name, q) in entries {
            let v = quantity::value(q).filter(|v| *v >= 0.0).ok_or_else(|| {
                format!("{name} = {q:?} is not a Kubernetes quantity (such as \"500m\", \"2\", \"4Gi\")")
            })?;
            match name {
                "cpu" => r.cpu_milli = (v * 1000.0).ceil() as u64,
                "memory" => r.memory = v.ceil() as u64,
                "pods" => r.pods = v.ceil() as u64,
                gpu if GPU_RESOURCES.contains(&gpu) => r.gpu += v.ceil() as u64,
                _ => {}
            }
        }
        Ok(r)
    }
}

/// Millicores as cores: `2500` → `2.5`.
pub fn cores(milli: u64) -> String {
    if milli.is_multiple_of(1000) {
        (milli / 1000).to_string()
    } else {
        format!("{}", milli as f64 / 1000.0)
    }
}

/// Bytes in the largest binary unit that keeps one decimal: `4294967296` → `4Gi`.
pub fn bytes(b: u64) -> String {
    const GI: f64 = 1024.0 * 1024.0 * 1024.0;
    const MI: f64 = 1024.0 * 1024.0;
    let b = b as f64;
    let round = |v: f64| {
        let r = (v * 10.0).round() / 10.0;
        if r.fract() == 0.0 {
            format!("{r:.0}")
        } else {
            format!("{r:.1}")
        }
    };
    if b >= GI {
        format!("{}Gi", round(b / GI))
    } else {
        format!("{}Mi", round(b / MI))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_read_as_the_api_server_reads_quantities() {
        let r = Resources::from_quantities([("cpu", "250m"), ("memory", "512Mi"), ("nvidia.com/gpu", "1")]).unwrap();
        assert_eq!(r, Resources { cpu_milli: 250, memory: 512 << 20, gpu: 1, pods: 0 });
        assert_eq!(Resources::from_quantities([("ephemeral-storage", "10Gi")]).unwrap(), Resources::default());
        let err = Resources::from_quantities([("cpu", "two")]).unwrap_err();
        assert!(err.contains("cpu = \"two\""), "{err}");
    }

    #[test]
    fn fitting_and_naming_what_does_not_fit() {
        let room = Resources { cpu_milli: 1000, memory: 1 << 30, gpu: 0, pods: 10 };
        let pod = Resources { cpu_milli: 500, memory: 1 << 20, gpu: 0, pods: 1 };
        assert!(pod.fits(&room));
        let gpu_pod = Resources { gpu: 1, ..pod };
        assert!(!gpu_pod.fits(&room));
        assert_eq!(gpu_pod.first_over(&room), Some("gpu"));
        assert_eq!(room.minus(pod.plus(pod).plus(pod)).cpu_milli, 0, "floored at zero");
        assert_eq!(cores(2500), "2.5");
        assert_eq!(bytes(4 << 30), "4Gi");
        assert_eq!(bytes(1536 << 20), "1.5Gi");
    }
}
