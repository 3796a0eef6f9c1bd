//! Every link of a chain placed in the base frame: what `arm_ik fk --all`
//! prints. The chain itself folds fixed joints away ([`Chain`] keeps only
//! the joints that move, for speed); here each URDF joint on the path
//! from base to tip is applied in turn, so the links between two moving
//! joints (a camera mount, a tool flange) get their own pose.

use super::{ChainSelection, RobotTree, origin_transform};
use crate::model::{Chain, ModelError, Transform};

/// A link of the chain and where it is.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkPose {
    pub link: String,
    /// The joint whose child the link is (`None` for the base link).
    pub joint: Option<String>,
    /// The link's frame in the base link's frame.
    pub pose: Transform,
}

impl RobotTree {
    /// Each link from the base to the tip of `sel`'s chain at the joint
    /// positions `q` (one per moving joint, in chain order, as
    /// [`Chain::fk`] takes them), the base first and the tip last.
    pub fn link_poses(&self, sel: &ChainSelection, q: &[f64]) -> Result<Vec<LinkPose>, ModelError> {
        let chain: Chain = self.chain(sel)?;
        assert_eq!(q.len(), chain.dof(), "one position per moving joint");
        let path = self.path(&chain.base, &chain.tip)?;
        let mut out = vec![LinkPose {
            link: chain.base.clone(),
            joint: None,
            pose: Transform::identity(),
        }];
        let mut t = Transform::identity();
        let mut moving = chain.joints.iter().zip(q);
        for &ji in &path {
            let j = &self.joints[ji];
            t *= origin_transform(&j.origin);
            if j.joint_type != urdf_rs::JointType::Fixed {
                let (joint, &qi) = moving.next().expect("the chain holds every moving joint");
                joint.move_frame(&mut t, qi);
            }
            out.push(LinkPose {
                link: j.child.link.clone(),
                joint: Some(j.name.clone()),
                pose: t,
            });
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_link_is_the_tip_where_fk_puts_it() {
        let tree = RobotTree::from_str(include_str!("../../../urdf/arm.urdf"), "arm").unwrap();
        let sel = ChainSelection::default();
        let chain = tree.chain(&sel).unwrap();
        let q = [0.3, -0.2, 0.9, 0.4, -1.0];
        let links = tree.link_poses(&sel, &q).unwrap();
        assert_eq!(links[0].link, chain.base);
        let tip = links.last().unwrap();
        assert_eq!(tip.link, chain.tip);
        let fk = chain.fk(&q);
        assert!((tip.pose.translation.vector - fk.translation.vector).norm() < 1e-12);
        assert!((tip.pose.rotation.matrix() - fk.rotation.matrix()).norm() < 1e-12);
    }
}
