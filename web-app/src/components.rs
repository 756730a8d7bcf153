//! The app's Yew components. Each takes plain results or state as props; none talks to the
//! worker directly (the app does).

pub mod array;
pub mod cache;
pub mod chart_card;
pub mod drop_zone;
pub mod export;
pub mod hot_data;
pub mod overview;
pub mod progress;
