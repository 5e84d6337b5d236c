//! Relations over the events of one candidate execution: edge lists, a
//! topological order (acyclicity) and the transitive closure as bit sets.

/// A set of event indices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Bits(Vec<u64>);

impl Bits {
    pub(crate) fn new(n: usize) -> Bits {
        Bits(vec![0; n.div_ceil(64)])
    }

    pub(crate) fn insert(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }

    pub(crate) fn contains(&self, i: usize) -> bool {
        self.0[i / 64] & (1 << (i % 64)) != 0
    }

    pub(crate) fn union_with(&mut self, other: &Bits) {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a |= b;
        }
    }
}

/// A directed graph on `n` events.
#[derive(Debug, Clone)]
pub(crate) struct Graph {
    pub(crate) succ: Vec<Vec<usize>>,
}

impl Graph {
    pub(crate) fn new(n: usize) -> Graph {
        Graph {
            succ: vec![Vec::new(); n],
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.succ.len()
    }

    pub(crate) fn edge(&mut self, a: usize, b: usize) {
        self.succ[a].push(b);
    }

    /// A topological order, or `None` when the graph has a cycle. `extra`
    /// edges are taken as if they were in the graph.
    pub(crate) fn topo_with(&self, extra: &[(usize, usize)]) -> Option<Vec<usize>> {
        let n = self.len();
        let mut indeg = vec![0u32; n];
        for s in &self.succ {
            for &b in s {
                indeg[b] += 1;
            }
        }
        let mut extra_succ: Vec<Vec<usize>> = Vec::new();
        if !extra.is_empty() {
            extra_succ = vec![Vec::new(); n];
            for &(a, b) in extra {
                extra_succ[a].push(b);
                indeg[b] += 1;
            }
        }
        let mut stack: Vec<usize> = (0..n).filter(|&i| indeg[i] == 0).collect();
        let mut order = Vec::with_capacity(n);
        while let Some(a) = stack.pop() {
            order.push(a);
            let more = extra_succ.get(a).map(Vec::as_slice).unwrap_or(&[]);
            for &b in self.succ[a].iter().chain(more) {
                indeg[b] -= 1;
                if indeg[b] == 0 {
                    stack.push(b);
                }
            }
        }
        (order.len() == n).then_some(order)
    }

    pub(crate) fn is_acyclic_with(&self, extra: &[(usize, usize)]) -> bool {
        self.topo_with(extra).is_some()
    }

    /// The strict transitive closure, given a topological order of an
    /// acyclic graph: `reach[a]` holds every `b` with a path `a -> ... -> b`.
    pub(crate) fn closure(&self, topo: &[usize]) -> Vec<Bits> {
        let n = self.len();
        let mut reach = vec![Bits::new(n); n];
        for &a in topo.iter().rev() {
            let mut r = Bits::new(n);
            for &b in &self.succ[a] {
                r.insert(b);
                r.union_with(&reach[b]);
            }
            reach[a] = r;
        }
        reach
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycles_are_found_and_closures_are_transitive() {
        let mut g = Graph::new(4);
        g.edge(0, 1);
        g.edge(1, 2);
        let topo = g.topo_with(&[]).expect("acyclic");
        let reach = g.closure(&topo);
        assert!(reach[0].contains(2));
        assert!(!reach[2].contains(0));
        assert!(!reach[0].contains(3));
        assert!(!g.is_acyclic_with(&[(2, 0)]));
        assert!(g.is_acyclic_with(&[(3, 0)]));
        g.edge(2, 0);
        assert!(g.topo_with(&[]).is_none());
    }

    #[test]
    fn bit_sets_span_words() {
        let mut a = Bits::new(130);
        a.insert(129);
        let mut b = Bits::new(130);
        b.insert(3);
        a.union_with(&b);
        assert!(a.contains(129) && a.contains(3) && !a.contains(64));
    }
}
