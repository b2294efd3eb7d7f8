//! A JSON CRUD API over in-memory state, with typed bodies and validation errors.
//!
//! ```text
//! cargo run -p vireo --example json_api
//! curl -X POST localhost:8080/todos -H 'content-type: application/json' -d '{"title":"write docs"}'
//! curl localhost:8080/todos/1
//! ```

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Mutex;
use vireo::http::StatusCode;
use vireo::{App, Error, Json, Request};

#[derive(Clone, Serialize)]
struct Todo {
    id: u64,
    title: String,
    done: bool,
}

#[derive(Deserialize)]
struct NewTodo {
    title: String,
}

#[derive(Deserialize)]
struct Update {
    title: Option<String>,
    done: Option<bool>,
}

#[derive(Deserialize)]
struct Page {
    #[serde(default)]
    done: Option<bool>,
}

#[derive(Default)]
struct Store {
    next_id: u64,
    todos: BTreeMap<u64, Todo>,
}

type Db = Mutex<Store>;

fn db(req: &Request) -> Result<std::sync::MutexGuard<'_, Store>, Error> {
    req.state::<Db>()?
        .lock()
        .map_err(|_| Error::new(StatusCode::INTERNAL_SERVER_ERROR, "store poisoned"))
}

fn validate_title(title: &str) -> Result<(), Error> {
    match title.trim().len() {
        0 => Err(Error::unprocessable("title must not be empty")),
        1..=200 => Ok(()),
        _ => Err(Error::unprocessable("title must be at most 200 characters")),
    }
}

fn list(req: Request) -> Result<Json<Vec<Todo>>, Error> {
    let page: Page = req.query()?;
    let store = db(&req)?;
    let todos = store.todos.values();
    Ok(Json(
        todos
            .filter(|t| page.done.is_none_or(|d| t.done == d))
            .cloned()
            .collect(),
    ))
}

fn create(req: Request) -> Result<(StatusCode, Json<Todo>), Error> {
    let new: NewTodo = req.json()?;
    validate_title(&new.title)?;
    let mut store = db(&req)?;
    store.next_id += 1;
    let todo = Todo {
        id: store.next_id,
        title: new.title.trim().to_owned(),
        done: false,
    };
    store.todos.insert(todo.id, todo.clone());
    Ok((StatusCode::CREATED, Json(todo)))
}

fn show(req: Request) -> Result<Json<Todo>, Error> {
    let id: u64 = req.param_as("id")?;
    let todo = db(&req)?.todos.get(&id).cloned();
    todo.map(Json)
        .ok_or_else(|| Error::not_found(format!("no todo {id}")))
}

fn update(req: Request) -> Result<Json<Todo>, Error> {
    let id: u64 = req.param_as("id")?;
    let changes: Update = req.json()?;
    if let Some(title) = &changes.title {
        validate_title(title)?;
    }
    let mut store = db(&req)?;
    let todo = store
        .todos
        .get_mut(&id)
        .ok_or_else(|| Error::not_found(format!("no todo {id}")))?;
    if let Some(title) = changes.title {
        todo.title = title.trim().to_owned();
    }
    if let Some(done) = changes.done {
        todo.done = done;
    }
    Ok(Json(todo.clone()))
}

fn remove(req: Request) -> Result<StatusCode, Error> {
    let id: u64 = req.param_as("id")?;
    match db(&req)?.todos.remove(&id) {
        Some(_) => Ok(StatusCode::NO_CONTENT),
        None => Err(Error::not_found(format!("no todo {id}"))),
    }
}

/// The app, apart from `main` so the tests can drive it.
pub fn app() -> App {
    let mut app = App::new();
    app.state(Db::default());
    app.get("/todos", list);
    app.post("/todos", create);
    app.get("/todos/:id", show);
    app.patch("/todos/:id", update);
    app.delete("/todos/:id", remove);
    app.on_error(|err| {
        let mut body = serde_json::json!({ "error": err.message() });
        if let Some(detail) = err.detail() {
            body["detail"] = detail.into();
        }
        (err.status(), Json(body))
    });
    app
}

fn main() -> std::io::Result<()> {
    let server = vireo::Server::bind("127.0.0.1:8080")?;
    let server = server.on_ready(|addr| println!("listening on http://{addr}"));
    app().serve(server)
}
