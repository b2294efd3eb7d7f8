//! The `json_api` example, driven through the test client.

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../examples/json_api.rs"]
mod json_api;

use serde_json::{json, Value};
use vireo::TestClient;

#[test]
fn crud_with_typed_json_and_validation_errors() {
    let c = TestClient::new(json_api::app());
    let created = c
        .post("/todos")
        .json(&json!({"title": " write docs "}))
        .send();
    assert_eq!(created.status(), 201);
    assert_eq!(
        created.json::<Value>(),
        json!({"id": 1, "title": "write docs", "done": false})
    );
    c.post("/todos").json(&json!({"title": "ship"})).send();

    assert_eq!(
        c.get("/todos/1").send().json::<Value>()["title"],
        "write docs"
    );
    let patched = c.patch("/todos/1").json(&json!({"done": true})).send();
    assert_eq!(patched.json::<Value>()["done"], true);
    let done: Value = c.get("/todos?done=true").send().json();
    assert_eq!(done.as_array().unwrap().len(), 1);
    assert_eq!(
        c.get("/todos")
            .send()
            .json::<Value>()
            .as_array()
            .unwrap()
            .len(),
        2
    );

    let empty = c.post("/todos").json(&json!({"title": "  "})).send();
    assert_eq!(empty.status(), 422);
    assert_eq!(empty.json::<Value>()["error"], "title must not be empty");
    let wrong_shape = c.post("/todos").json(&json!({"name": "x"})).send();
    assert_eq!(wrong_shape.status(), 422);
    assert!(wrong_shape.json::<Value>()["detail"]
        .as_str()
        .unwrap()
        .contains("title"));
    let not_json = c
        .post("/todos")
        .header("content-type", "application/json")
        .body("{")
        .send();
    assert_eq!(not_json.status(), 400);
    assert_eq!(c.post("/todos").body("title=x").send().status(), 415);
    assert_eq!(c.get("/todos/abc").send().status(), 400);
    assert_eq!(
        c.get("/todos/99").send().json::<Value>()["error"],
        "no todo 99"
    );

    assert_eq!(c.delete("/todos/1").send().status(), 204);
    assert_eq!(c.get("/todos/1").send().status(), 404);
    assert_eq!(c.put("/todos/1").send().status(), 405);
}
