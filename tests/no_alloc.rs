//! Forward kinematics and the Jacobian run in every solver iteration and in
//! the control loop: they must not allocate. A counting global allocator
//! (this test binary only) checks it, counting the test's own thread only:
//! the test harness's other threads allocate when they please (a loaded
//! machine once made them count 4 during the loop).

use arm_ik::model::{Chain, Frames};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Set on the thread whose allocations count (const-initialised, so
    /// reading it allocates nothing).
    static COUNTED: Cell<bool> = const { Cell::new(false) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTED.with(Cell::get) {
            ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        }
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn fk_and_jacobian_do_not_allocate() {
    let root = env!("CARGO_MANIFEST_DIR");
    for urdf in ["urdf/arm.urdf", "urdf/leg.urdf"] {
        let chain = Chain::from_urdf_file(format!("{root}/{urdf}"), None, None).unwrap();
        let mut frames = Frames::new(&chain);
        let q = vec![0.3; chain.dof()];
        let mut sink = 0.0;
        let before = ALLOCATIONS.load(Ordering::SeqCst);
        COUNTED.with(|c| c.set(true));
        for i in 0..1000 {
            let mut qi = [0.0; 8];
            for (k, v) in q.iter().enumerate() {
                qi[k] = v + i as f64 * 1e-4;
            }
            let qi = &qi[..chain.dof()];
            sink += chain.fk(qi).translation.x;
            sink += chain.joint_frames(qi, &mut frames).translation.y;
            sink += chain.jacobian(qi, &mut frames).translation.z;
            sink += frames.columns[0].linear.x;
        }
        COUNTED.with(|c| c.set(false));
        let after = ALLOCATIONS.load(Ordering::SeqCst);
        assert!(sink.is_finite());
        assert_eq!(
            after - before,
            0,
            "{urdf}: {} allocations in 3000 FK/Jacobian calls",
            after - before
        );
    }
}
